/**
 * The capability catalogue (spec 3.4, 5.1; DESIGN 4.1, 4.2): what the organization can do in the world, each
 * with a risk tier, a cost, a connector and an input schema, as the organization file declares them.
 */
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { type Queryable } from '../../platform/database.js';
import { contentActionSchema } from './connectors/content-actions.js';
import { orgErrors } from '../errors.js';
import { RISKS, VERDICTS } from '../gate/index.js';
import { newId } from '../ids.js';
import { differsFromExcluded, upsertOutcome, type UpsertOutcome } from '../../platform/upsert.js';
import { agents, capabilities, type ConnectorJson } from '../schema.js';

export interface CapabilityInput {
  key: string;
  name: string;
  description: string;
  risk: 'low' | 'medium' | 'high' | 'critical';
  cost: number;
  connector: ConnectorJson;
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

/** DESIGN 4.2: with no file, the first start wires publish_blog_post (risk high) to the content service beside it. */
export async function ensureDefaultPublishCapability(db: Queryable): Promise<void> {
  await db
    .insert(capabilities)
    .values({
      id: newId('cap'),
      key: 'publish_blog_post',
      name: 'Publish a blog post on the website',
      description: 'Publishes a blog post of the content service beside this organization, by its slug.',
      risk: 'high',
      cost: 1,
      connector: { kind: 'content', action: 'publish_blog_post' },
      inputSchema: null,
      enabled: true,
    })
    .onConflictDoNothing({ target: capabilities.key });
}

export type CapabilityRow = typeof capabilities.$inferSelect;
export type AgentRow = typeof agents.$inferSelect;

export const capabilityRecord = z.object({
  id: z.string(),
  key: z.string(),
  name: z.string(),
  description: z.string(),
  risk: z.enum(RISKS),
  cost: z.number().int(),
  /** The JSON Schema `input` must match; null when the capability takes any input object. */
  input_schema: z.record(z.string(), z.unknown()).nullable(),
  enabled: z.boolean(),
  connector: z.object({ kind: z.enum(['webhook', 'content']) }),
});
export type CapabilityRecord = z.infer<typeof capabilityRecord>;

export const gateVerdictRecord = z.object({
  verdict: z.enum(VERDICTS),
  reasons: z.array(z.string()),
  rule_ids: z.array(z.string()),
  shadow: z.array(z.object({ rule_id: z.string(), name: z.string(), would: z.enum(VERDICTS) })),
  /** With require_approval: how many different people must approve, when more than one (DESIGN 4.8). */
  approvals: z.number().int().optional(),
});

/** The input schema in force: the file's, else (content connector) the content tool's own arguments. */
export function inputSchemaOf(row: CapabilityRow): Record<string, unknown> | null {
  if (row.inputSchema) return row.inputSchema;
  const connector = row.connector;
  return connector.kind === 'content' ? contentActionSchema(connector.action) : null;
}

export function toCapabilityRecord(row: CapabilityRow): CapabilityRecord {
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    description: row.description,
    risk: row.risk,
    cost: row.cost,
    input_schema: inputSchemaOf(row),
    enabled: row.enabled,
    connector: { kind: row.connector.kind },
  };
}

export async function listCapabilities(db: Queryable, query?: string): Promise<CapabilityRecord[]> {
  const rows = await db.select().from(capabilities).orderBy(capabilities.key);
  const words = (query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  return rows
    .filter((row) => words.every((word) => `${row.key} ${row.name} ${row.description}`.toLowerCase().includes(word)))
    .map(toCapabilityRecord);
}

export async function findCapability(db: Queryable, id: string): Promise<CapabilityRow> {
  const [row] = await db.select().from(capabilities).where(eq(capabilities.id, id));
  if (!row) throw orgErrors.notFound('capability');
  return row;
}
