/**
 * Capabilities the organization can execute through the gate (DESIGN 4.1, 4.4). This issue stores what
 * the organization file declares; listing, describing and executing them come with the gate.
 */
import { sql } from 'drizzle-orm';
import type { Queryable } from '../platform/database.js';
import { newId } from './ids.js';
import { capabilities } from './schema.js';

export interface CapabilityInput {
  key: string;
  name: string;
  description: string;
  risk: 'low' | 'medium' | 'high' | 'critical';
  cost: number;
  connector: Record<string, unknown>;
  inputSchema: Record<string, unknown> | null;
  enabled: boolean;
}

export async function upsertCapability(db: Queryable, input: CapabilityInput): Promise<{ created: boolean }> {
  const [row] = await db
    .insert(capabilities)
    .values({ id: newId('cap'), ...input })
    .onConflictDoUpdate({ target: capabilities.key, set: { ...input, updatedAt: sql`now()` } })
    .returning({ created: sql<boolean>`(xmax = 0)` });
  return { created: row.created };
}
