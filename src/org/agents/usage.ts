/**
 * Agents' monthly usage (DESIGN 4.5: "Budgets count capability cost per agent per calendar month (UTC)").
 * The gate charges an agent with `chargeAgent` when it runs a capability, and reads `agentUsage` for the
 * budget step of DESIGN 4.4; list_agents shows the same figures.
 */
import { and, eq, inArray, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { queryRows, type Queryable } from '../../platform/database.js';
import { announce } from '../events/announce.js';
import { agents, agentMonthlyUsage } from '../schema.js';

/** An agent's month as list_agents shows it; `budget` and `remaining` are null for an agent without a budget. */
export const usageRecord = z.object({
  month: z.string().regex(/^\d{4}-\d{2}$/),
  used: z.number().int(),
  budget: z.number().int().nullable(),
  remaining: z.number().int().nullable(),
});
export type UsageRecord = z.infer<typeof usageRecord>;

/** The UTC calendar month of `at`, as `YYYY-MM`. */
export function usageMonth(at: Date = new Date()): string {
  return at.toISOString().slice(0, 7);
}

/**
 * Adds `units` to the agent's use this month in one statement, so concurrent charges are all counted;
 * returns the month's new total.
 */
export async function chargeAgent(db: Queryable, agentId: string, units: number, at: Date = new Date()): Promise<number> {
  const [row] = await queryRows<{ used: number }>(db, sql`${chargeAgentStatement(agentId, units, { at })} RETURNING used`);
  return Number(row.used);
}

/** The agent's use of `month` (default the current one) against its budget; undefined for an unknown agent. */
export async function agentUsage(db: Queryable, agentId: string, month: string = usageMonth()): Promise<UsageRecord | undefined> {
  return (await usageOfAgents(db, [agentId], month)).get(agentId);
}

/** Usage of several agents in one query, keyed by agent id. */
export async function usageOfAgents(db: Queryable, agentIds: readonly string[], month: string = usageMonth()): Promise<Map<string, UsageRecord>> {
  if (agentIds.length === 0) return new Map();
  const rows = await db
    .select({ id: agents.id, budget: agents.budget, used: sql<number>`coalesce(${agentMonthlyUsage.used}, 0)`.mapWith(Number) })
    .from(agents)
    .leftJoin(agentMonthlyUsage, and(eq(agentMonthlyUsage.agentId, agents.id), eq(agentMonthlyUsage.month, month)))
    .where(inArray(agents.id, [...agentIds]));
  return new Map(
    rows.map((row) => [
      row.id,
      { month, used: row.used, budget: row.budget, remaining: row.budget === null ? null : Math.max(row.budget - row.used, 0) },
    ]),
  );
}

/**
 * `chargeAgent`'s statement, to embed in a larger one: with `from` (`FROM first`, a CTE that decides whether
 * to charge) it charges once per row of it: `WITH first AS (…) ${chargeAgentStatement(…, { from })}`. With
 * `fits`, it charges only when `fits(the month's use before the charge)` holds, judged on the row the upsert has
 * locked, so concurrent charges cannot together pass what each alone would not.
 */
export function chargeAgentStatement(agentId: string, units: number, options: { from?: SQL; at?: Date; fits?: (before: SQL) => SQL } = {}): SQL {
  const { fits } = options;
  const onInsert = fits ? sql` WHERE ${fits(sql`0`)}` : sql``;
  const onConflict = fits ? sql` WHERE ${fits(sql`${agentMonthlyUsage}.used`)}` : sql``;
  return sql`INSERT INTO ${agentMonthlyUsage} (agent_id, month, used) SELECT ${agentId}, ${usageMonth(options.at)}, ${units} ${options.from ?? sql``}${onInsert}
    ON CONFLICT (agent_id, month) DO UPDATE SET used = ${agentMonthlyUsage}.used + excluded.used, updated_at = now()${onConflict}`;
}

/** The agent's monthly budget (null: none), as an expression to read in the statement that charges it. */
export function budgetSql(agentId: string): SQL {
  return sql`(SELECT budget FROM ${agents} WHERE id = ${agentId})`;
}

/** DESIGN 4.8: `budget.threshold` tells other tools an agent has used 80 % of its month's budget. */
const THRESHOLD_PERCENT = 80;

/**
 * Called with the result of a charge, in its transaction: when that charge took the month's use across 80 % of the
 * budget, marks the month (only if not marked yet) and announces `budget.threshold` — once per agent and month, however
 * many charges race across the line or a budget lowered and raised again makes it cross twice. Charges that cross
 * nothing add no statement.
 */
export async function announceBudgetCrossing(tx: Queryable, charge: { agentId: string; month: string; cost: number; used: number; budget: number | null }): Promise<void> {
  const { budget, used, cost } = charge;
  if (budget === null || budget <= 0 || cost <= 0) return;
  const crossed = used * 100 >= budget * THRESHOLD_PERCENT && (used - cost) * 100 < budget * THRESHOLD_PERCENT;
  if (!crossed) return;
  const marked = await queryRows(
    tx,
    sql`UPDATE ${agentMonthlyUsage} SET threshold_announced_at = now()
      WHERE agent_id = ${charge.agentId} AND month = ${charge.month} AND threshold_announced_at IS NULL RETURNING agent_id`,
  );
  if (marked.length) await announce(tx, 'budget.threshold', { agent_id: charge.agentId, month: charge.month });
}

/** `announceBudgetCrossing`'s test as SQL: whether charging `cost` on top of `before` takes the month across the line. */
export function thresholdCrossedSql(before: SQL, cost: number, budget: SQL): SQL {
  return sql`(${budget} > 0 AND ${cost} > 0 AND (${before} + ${cost}) * 100 >= ${budget} * ${THRESHOLD_PERCENT} AND ${before} * 100 < ${budget} * ${THRESHOLD_PERCENT})`;
}

/** What the agent used in `month`, as an expression to read with other things in one statement. */
export function spentThisMonthSql(agentId: string | Placeholder, month: string | Placeholder): SQL {
  return sql`coalesce((SELECT used FROM ${agentMonthlyUsage} WHERE agent_id = ${agentId} AND month = ${month}), 0)`;
}

/** The active agents that have a monthly budget, with this month's use: what the console home shows. */
export async function budgetedAgents(db: Queryable, month: string = usageMonth()): Promise<Array<{ id: string; name: string } & UsageRecord>> {
  const rows = await db
    .select({ id: agents.id, name: agents.name })
    .from(agents)
    .where(and(sql`${agents.budget} IS NOT NULL`, eq(agents.status, 'active')))
    .orderBy(agents.name)
    .limit(50);
  const usage = await usageOfAgents(db, rows.map((row) => row.id), month);
  return rows.flatMap((row) => {
    const record = usage.get(row.id);
    return record ? [{ ...row, ...record }] : [];
  });
}
