/**
 * Agent budgets (DESIGN 4.5): "Budgets count capability cost per agent per calendar month (UTC)." The gate
 * reads what an agent spent this month (`agentUsage`); running a capability charges its cost (`chargeAgent`).
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Queryable } from '../platform/database.js';
import { agentUsage as usageTable } from './schema.js';

/** `YYYY-MM` of `at` in UTC. */
export function usageMonth(at: Date = new Date()): string {
  return at.toISOString().slice(0, 7);
}

export async function agentUsage(db: Queryable, agentId: string, at: Date = new Date()): Promise<number> {
  const [row] = await db
    .select({ units: usageTable.units })
    .from(usageTable)
    .where(and(eq(usageTable.agentId, agentId), eq(usageTable.month, usageMonth(at))));
  return row?.units ?? 0;
}

export async function chargeAgent(db: Queryable, agentId: string, units: number, at: Date = new Date()): Promise<void> {
  if (units <= 0) return;
  await db
    .insert(usageTable)
    .values({ agentId, month: usageMonth(at), units })
    .onConflictDoUpdate({ target: [usageTable.agentId, usageTable.month], set: { units: sql`${usageTable.units} + ${units}` } });
}
