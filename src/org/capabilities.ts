/**
 * Capabilities the organization can execute through the gate (DESIGN 4.1, 4.4). This issue stores what
 * the organization file declares; listing, describing and executing them come with the gate.
 */
import { sql } from 'drizzle-orm';
import type { Queryable } from '../platform/database.js';
import { newId } from './ids.js';
import { differsFromExcluded, upsertOutcome, type UpsertOutcome } from '../platform/upsert.js';
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

export async function upsertCapability(db: Queryable, input: CapabilityInput): Promise<{ outcome: UpsertOutcome }> {
  const compared = (Object.keys(input) as Array<keyof CapabilityInput>).map((key) => capabilities[key]);
  const [row] = await db
    .insert(capabilities)
    .values({ id: newId('cap'), ...input })
    .onConflictDoUpdate({ target: capabilities.key, set: { ...input, updatedAt: sql`now()` }, setWhere: differsFromExcluded(capabilities, compared) })
    .returning({ created: sql<boolean>`(xmax = 0)` });
  return { outcome: upsertOutcome(row) };
}
