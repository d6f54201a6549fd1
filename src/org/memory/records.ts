/**
 * Company memory (DESIGN 4.1, 4.3): facts, decisions and standing instructions placed in a space, each with
 * its provenance — who recorded it (a person through a client, or an agent on a person's behalf from an
 * operation) and when.
 *
 * Items are never edited. A new version `supersedes` the current one, which becomes `superseded` (with the
 * time it happened and the id of its successor); `get_memory` shows every version of the item, newest first.
 * Each item may also carry a validity window (`valid_from`, `valid_until`). What search shows is decided at
 * one instant, `as_of` (default now): items already recorded then, not yet superseded then (unless
 * `include_superseded`), and valid then.

 */

import { z } from 'zod';
import { toIso } from '../../platform/time.js';
import { id as fieldId, instant as fieldInstant, text } from '../fields.js';
import { memoryItems } from '../schema.js';

export const MEMORY_KINDS = ['fact', 'decision', 'instruction'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

// ---------------------------------------------------------------------------------------------------------
// Inputs

const id = fieldId();
/** An instant with its offset (spec 4.2 rule 3: no zone is assumed), kept as given so microseconds survive. */
const instant = fieldInstant();
/** Tags are compared as given after trimming and lower-casing: `Billing` and `billing` are one tag. */
const tag = text()
  .trim()
  .min(1)
  .max(40)
  .transform((value) => value.toLowerCase());

export const recordMemoryInput = z
  .object({
    kind: z.enum(MEMORY_KINDS).describe('fact (something true), decision (something decided) or instruction (a standing instruction to follow)'),
    title: text().trim().min(1).max(200),
    body: text().trim().min(1).max(20_000),
    space_id: id.describe('The space the item belongs to (from service_context)'),
    tags: z.array(tag).max(20).optional(),
    supersedes: id.optional().describe('The id of the current item this one replaces; it keeps its history and stops showing in search'),
    valid_from: instant.optional().describe('From when the item holds (ISO 8601 with offset); default: always'),
    valid_until: instant.optional().describe('Until when the item holds (ISO 8601 with offset, exclusive); default: no end'),
  })
  .strict();
export type RecordMemoryInput = z.output<typeof recordMemoryInput>;

export const searchMemoryInput = z
  .object({
    query: text().trim().min(1).max(500).describe('Words to look for; "quoted phrases", OR and -exclusions work as in web search'),
    kind: z.enum(MEMORY_KINDS).optional(),
    tags: z.array(tag).min(1).max(20).optional().describe('Only items carrying every one of these tags'),
    space_id: id.optional().describe('Only this space; default: every space you belong to'),
    as_of: instant.optional().describe('Show what was current and valid at this instant (ISO 8601 with offset); default: now'),
    include_superseded: z.boolean().default(false).describe('Also show versions replaced by newer ones'),
    limit: z.number().int().min(1).max(50).default(20),
    cursor: text().min(1).max(1000).optional().describe('next_cursor of the previous page of the same search'),
  })
  .strict();
export type SearchMemoryInput = z.input<typeof searchMemoryInput>;

export const getMemoryInput = z.object({ memory_id: id }).strict();

// ---------------------------------------------------------------------------------------------------------
// Records (DESIGN 4.3 "Shapes")

export const memoryProvenance = z.object({
  recorded_by: z.object({ type: z.enum(['person', 'agent']), id: z.string(), name: z.string() }),
  on_behalf_of: z.object({ person_id: z.string() }).optional(),
  client_id: z.string().optional(),
  operation_id: z.string().optional(),
  recorded_at: z.string(),
});

export const memoryItemRecord = z.object({
  id: z.string(),
  kind: z.enum(MEMORY_KINDS),
  title: z.string(),
  body: z.string(),
  tags: z.array(z.string()),
  space_id: z.string(),
  status: z.enum(['current', 'superseded']),
  valid_from: z.string().optional(),
  valid_until: z.string().optional(),
  supersedes: z.string().optional(),
  superseded_by: z.string().optional(),
  /** When the next version was recorded. */
  superseded_at: z.string().optional(),
  provenance: memoryProvenance,
});
export type MemoryItem = z.infer<typeof memoryItemRecord>;

export const memoryItemWithHistory = memoryItemRecord.extend({
  /** Every version of the item, this one included, newest first. */
  history: z.array(memoryItemRecord),
});
export type MemoryItemWithHistory = z.infer<typeof memoryItemWithHistory>;

export const memoryPage = z.object({ items: z.array(memoryItemRecord), next_cursor: z.string().nullable() });
export type MemoryPage = z.infer<typeof memoryPage>;

// ---------------------------------------------------------------------------------------------------------
// Who records and who reads

/**
 * Who records an item: a person through a connected client (an MCP tool call), or an agent working an
 * operation on a person's behalf (the agent API, DESIGN 4.5).
 */
export type MemoryRecorder =
  | { type: 'person'; personId: string; clientId: string | null }
  | { type: 'agent'; agentId: string; onBehalfOfPersonId: string; operationId: string; clientId?: string | null };

/** The spaces a reader or recorder may see; any other space's items do not exist for them. */
export interface MemoryCaller {
  spaceIds: readonly string[];
}

export const itemColumns = {
  id: memoryItems.id,
  kind: memoryItems.kind,
  title: memoryItems.title,
  body: memoryItems.body,
  tags: memoryItems.tags,
  spaceId: memoryItems.spaceId,
  status: memoryItems.status,
  validFrom: memoryItems.validFrom,
  validUntil: memoryItems.validUntil,
  lineageId: memoryItems.lineageId,
  supersedes: memoryItems.supersedes,
  supersededBy: memoryItems.supersededBy,
  supersededAt: memoryItems.supersededAt,
  recordedByType: memoryItems.recordedByType,
  recordedById: memoryItems.recordedById,
  recordedByName: memoryItems.recordedByName,
  onBehalfOfPersonId: memoryItems.onBehalfOfPersonId,
  clientId: memoryItems.clientId,
  operationId: memoryItems.operationId,
  recordedAt: memoryItems.recordedAt,
};
type MemoryRow = { [K in keyof typeof itemColumns]: (typeof memoryItems.$inferSelect)[K] };

export function toMemoryItem(row: MemoryRow): MemoryItem {
  return {
    id: row.id,
    kind: row.kind,
    title: row.title,
    body: row.body,
    tags: row.tags,
    space_id: row.spaceId,
    status: row.status,
    ...(row.validFrom === null ? {} : { valid_from: toIso(row.validFrom) }),
    ...(row.validUntil === null ? {} : { valid_until: toIso(row.validUntil) }),
    ...(row.supersedes === null ? {} : { supersedes: row.supersedes }),
    ...(row.supersededBy === null ? {} : { superseded_by: row.supersededBy }),
    ...(row.supersededAt === null ? {} : { superseded_at: toIso(row.supersededAt) }),
    provenance: {
      recorded_by: { type: row.recordedByType, id: row.recordedById, name: row.recordedByName },
      ...(row.onBehalfOfPersonId === null ? {} : { on_behalf_of: { person_id: row.onBehalfOfPersonId } }),
      ...(row.clientId === null ? {} : { client_id: row.clientId }),
      ...(row.operationId === null ? {} : { operation_id: row.operationId }),
      recorded_at: toIso(row.recordedAt),
    },
  };
}
