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
 *
 * Search is PostgreSQL full-text search over a generated `tsvector` (title A, body B, tags C) with a GIN
 * index, ranked with `ts_rank`; when it finds nothing — a partial word (`kube` for `kubernetes`), a short
 * one inside another (`db` in `mongodb`) — the trigram fallback matches substrings of a lower-cased copy of
 * the text (pg_trgm, GIN), newest first.
 *
 * Cursors are opaque (base64url JSON): which of the two searches the first page used, and the rank and
 * `recorded_at` of the last item returned. Pages are ordered by (rank, recorded_at) descending, and
 * `recorded_at` is unique per item (platform/time.ts), so the next page is exactly the items after that
 * pair: none skipped, none repeated, even when items are recorded while a client pages. A cursor also
 * carries a fingerprint of the search it belongs to; used with another search it is refused, and one whose rank
 * or time was changed to something PostgreSQL cannot read is refused too (platform/paging.ts).
 */
import { createHash } from 'node:crypto';
import { and, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { canonicalJson } from '../../platform/canonical-json.js';
import type { Queryable } from '../../platform/database.js';
import { cursorParts, decodeOpaqueCursor, encodeOpaqueCursor } from '../../platform/paging.js';
import { orderedNow, toIso } from '../../platform/time.js';
import { orgErrors } from '../errors.js';
import { id as fieldId, instant as fieldInstant, text } from '../fields.js';
import { newId } from '../ids.js';
import { agents, memoryItems, people } from '../schema.js';

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
export type MemoryProvenance = z.infer<typeof memoryProvenance>;

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

// ---------------------------------------------------------------------------------------------------------
// Writes

const itemColumns = {
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

/**
 * Records a new item, or a new version of a current one (`supersedes`). Run it in one transaction (the tool
 * registry's): the superseded item is claimed first with a conditional UPDATE, so of two versions racing to
 * supersede one item exactly one wins and the other is refused with `invalid_state`, writing nothing.
 */
export async function recordMemory(db: Queryable, input: RecordMemoryInput, recorder: MemoryRecorder, caller: MemoryCaller): Promise<MemoryItem> {
  if (!caller.spaceIds.includes(input.space_id)) throw orgErrors.notFound('space');
  if (input.valid_from && input.valid_until && Date.parse(input.valid_until) <= Date.parse(input.valid_from)) {
    throw orgErrors.invalidArgument('valid_until', 'must be later than valid_from');
  }
  const id = newId('mem');
  let lineageId = id;
  let recordedAt: SQL | string = orderedNow();
  if (input.supersedes) {
    const replaced = await claimForSuperseding(db, input.supersedes, id, input.space_id, caller);
    lineageId = replaced.lineageId;
    // The new version becomes current at the very instant the old one stopped being current.
    recordedAt = replaced.supersededAt;
  }
  const [row] = await db
    .insert(memoryItems)
    .values({
      id,
      kind: input.kind,
      title: input.title,
      body: input.body,
      tags: [...new Set(input.tags ?? [])],
      spaceId: input.space_id,
      validFrom: input.valid_from ?? null,
      validUntil: input.valid_until ?? null,
      lineageId,
      supersedes: input.supersedes ?? null,
      recordedByType: recorder.type,
      recordedById: recorder.type === 'person' ? recorder.personId : recorder.agentId,
      recordedByName: await recorderName(db, recorder),
      onBehalfOfPersonId: recorder.type === 'agent' ? recorder.onBehalfOfPersonId : null,
      clientId: recorder.clientId ?? null,
      operationId: recorder.type === 'agent' ? recorder.operationId : null,
      recordedAt,
    })
    .returning(itemColumns);
  return toMemoryItem(row);
}

/** Marks `supersededId` superseded by `byId`, or says exactly why it cannot be. */
async function claimForSuperseding(db: Queryable, supersededId: string, byId: string, spaceId: string, caller: MemoryCaller) {
  const [claimed] = await db
    .update(memoryItems)
    .set({ status: 'superseded', supersededBy: byId, supersededAt: orderedNow() })
    .where(and(eq(memoryItems.id, supersededId), eq(memoryItems.spaceId, spaceId), eq(memoryItems.status, 'current')))
    .returning({ lineageId: memoryItems.lineageId, supersededAt: memoryItems.supersededAt });
  if (claimed) return { lineageId: claimed.lineageId, supersededAt: claimed.supersededAt! };

  const [target] = await db
    .select({ spaceId: memoryItems.spaceId, status: memoryItems.status, supersededBy: memoryItems.supersededBy })
    .from(memoryItems)
    .where(eq(memoryItems.id, supersededId));
  if (!target || !caller.spaceIds.includes(target.spaceId)) throw orgErrors.notFound('memory item');
  if (target.spaceId !== spaceId) throw orgErrors.invalidArgument('supersedes', 'the item is in another space; a new version stays in its space');
  throw orgErrors.invalidState(
    `the memory item is already superseded by ${target.supersededBy}, so it cannot be superseded again: supersede its current version`,
    { status: target.status, superseded_by: target.supersededBy },
  );
}

async function recorderName(db: Queryable, recorder: MemoryRecorder): Promise<string> {
  const [row] =
    recorder.type === 'person'
      ? await db.select({ name: people.name }).from(people).where(eq(people.id, recorder.personId))
      : await db.select({ name: agents.name }).from(agents).where(eq(agents.id, recorder.agentId));
  if (!row) throw new Error(`memory recorder ${recorder.type} does not exist`);
  return row.name;
}

// ---------------------------------------------------------------------------------------------------------
// Reads

/** The item and every version of it, newest first; an item outside the caller's spaces is `not_found`. */
export async function getMemory(db: Queryable, memoryId: string, caller: MemoryCaller): Promise<MemoryItemWithHistory> {
  const [row] = await db.select(itemColumns).from(memoryItems).where(eq(memoryItems.id, memoryId));
  if (!row || !caller.spaceIds.includes(row.spaceId)) throw orgErrors.notFound('memory item');
  // Versions never leave their space, so the whole lineage is visible with its first item.
  const versions = await db.select(itemColumns).from(memoryItems).where(eq(memoryItems.lineageId, row.lineageId)).orderBy(desc(memoryItems.recordedAt));
  return { ...toMemoryItem(row), history: versions.map(toMemoryItem) };
}

/**
 * `all`: every word must match (web-search syntax, what `search_memory` asks for). `any`: items matching
 * more of the words rank higher, none is required — for the assistant, whose input is a question.
 */
export type MatchMode = 'all' | 'any';

/** Which search served the first page; later pages use the same. */
type SearchMethod = 'fts' | 'trigram';

interface Cursor {
  method: SearchMethod;
  rank: string;
  recordedAt: string;
  search: string;
}

/** Ranked items visible to the caller (see the module comment for what is visible when). */
export async function searchMemory(
  db: Queryable,
  rawInput: SearchMemoryInput,
  caller: MemoryCaller,
  options: { match?: MatchMode } = {},
): Promise<MemoryPage> {
  const input = searchMemoryInput.parse(rawInput);
  const match = options.match ?? 'all';
  if (input.space_id && !caller.spaceIds.includes(input.space_id)) throw orgErrors.notFound('space');
  const fingerprint = searchFingerprint(input, match);
  const cursor = input.cursor === undefined ? undefined : decodeCursor(input.cursor, fingerprint);
  const filters = visibleWhere(input, caller);

  let method: SearchMethod = cursor?.method ?? 'fts';
  let rows = method === 'fts' ? await rankedPage(db, ftsSearch(input.query, match), filters, cursor, input.limit) : [];
  if (method === 'trigram' || (!cursor && rows.length === 0)) {
    method = 'trigram';
    const search = await trigramSearch(db, input.query, match);
    rows = search ? await rankedPage(db, search, filters, cursor, input.limit) : [];
  }
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return {
    items: page.map(toMemoryItem),
    next_cursor:
      rows.length > input.limit ? encodeCursor({ method, rank: last.rank, recordedAt: toIso(last.recordedAt), search: fingerprint }) : null,
  };
}

/** What makes an item visible to this search, apart from matching its words. */
function visibleWhere(input: z.output<typeof searchMemoryInput>, caller: MemoryCaller): SQL {
  const at = input.as_of === undefined ? sql`now()` : sql`${input.as_of}::timestamptz`;
  return and(
    input.space_id ? eq(memoryItems.spaceId, input.space_id) : inArray(memoryItems.spaceId, [...caller.spaceIds]),
    input.kind ? eq(memoryItems.kind, input.kind) : undefined,
    input.tags ? sql`${memoryItems.tags} @> ${JSON.stringify(input.tags)}::jsonb` : undefined,
    sql`(${memoryItems.validFrom} IS NULL OR ${memoryItems.validFrom} <= ${at})`,
    sql`(${memoryItems.validUntil} IS NULL OR ${memoryItems.validUntil} > ${at})`,
    // An item recorded after `as_of` did not exist yet; without `as_of` every recorded item did.
    input.as_of === undefined ? undefined : sql`${memoryItems.recordedAt} <= ${at}`,
    input.include_superseded
      ? undefined
      : input.as_of === undefined
        ? eq(memoryItems.status, 'current')
        : sql`(${memoryItems.supersededAt} IS NULL OR ${memoryItems.supersededAt} > ${at})`,
  )!;
}

/** A way of matching and ranking items: its match condition and a `real` rank (higher is better). */
interface RankedSearch {
  matches: SQL;
  rank: SQL;
}

function ftsSearch(query: string, match: MatchMode): RankedSearch {
  const tsquery =
    match === 'all'
      ? sql`websearch_to_tsquery('english', ${query})`
      : sql`replace(plainto_tsquery('english', ${query})::text, ' & ', ' | ')::tsquery`;
  return { matches: sql`${memoryItems.search} @@ ${tsquery}`, rank: sql`ts_rank(${memoryItems.search}, ${tsquery})` };
}

/**
 * The fallback for words full-text search cannot match, such as a partial word (`kube` for `kubernetes`) or
 * a short one inside a longer word (`db` in `mongodb`): each word of the query (English stop words left out,
 * as full-text search leaves them out) found as a substring — all of them, or any for `any` — through the
 * trigram index. Substring matches carry no useful relevance, so they come newest first (the rank is the same
 * for all); that order can also be read from the `recorded_at` index, so a fragment found in many items
 * stops after one page instead of ranking them all. Null when the query has no word to look for.
 */
async function trigramSearch(db: Queryable, query: string, match: MatchMode): Promise<RankedSearch | null> {
  const words = [...new Set(query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean))].slice(0, 10);
  if (words.length === 0) return null;
  const result = await db.execute(
    sql`SELECT concat(${sql.join(
      words.map((word) => sql`(numnode(plainto_tsquery('english', ${word})) > 0)::int`),
      sql`, `,
    )}) AS keep`,
  );
  const keep = String((result as unknown as { rows: Array<{ keep: string }> }).rows[0].keep);
  const kept = words.filter((_, i) => keep[i] === '1');
  if (kept.length === 0) return null;
  const substrings = kept.map((word) => sql`${memoryItems.searchText} LIKE ${`%${escapeLike(word)}%`}`);
  return { matches: sql`(${sql.join(substrings, match === 'all' ? sql` AND ` : sql` OR `)})`, rank: sql`0::real` };
}

function escapeLike(word: string): string {
  return word.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/** One page (plus one row, to know whether another follows) after the cursor's (rank, recorded_at). */
async function rankedPage(db: Queryable, search: RankedSearch, filters: SQL, cursor: Cursor | undefined, limit: number) {
  const after = cursor
    ? sql`(${search.rank} < ${cursor.rank}::real OR (${search.rank} = ${cursor.rank}::real AND ${memoryItems.recordedAt} < ${cursor.recordedAt}::timestamptz))`
    : undefined;
  return db
    .select({ ...itemColumns, rank: sql<string>`(${search.rank})::text` })
    .from(memoryItems)
    .where(and(search.matches, filters, after))
    .orderBy(sql`${search.rank} DESC`, desc(memoryItems.recordedAt))
    .limit(limit + 1);
}

function searchFingerprint(input: z.output<typeof searchMemoryInput>, match: MatchMode): string {
  const { cursor: _cursor, limit: _limit, ...search } = input;
  return createHash('sha256').update(canonicalJson({ ...search, match })).digest('base64url').slice(0, 16);
}

function encodeCursor(cursor: Cursor): string {
  return encodeOpaqueCursor([cursor.method, cursor.rank, cursor.recordedAt, cursor.search]);
}

const isMethod = (part: unknown): part is SearchMethod => part === 'fts' || part === 'trigram';

function decodeCursor(text: string, fingerprint: string): Cursor {
  const parts = decodeOpaqueCursor(text, [isMethod, cursorParts.real, cursorParts.instant, cursorParts.text]);
  if (!parts) throw orgErrors.invalidArgument('cursor', 'not a cursor this service returned');
  const [method, rank, recordedAt, search] = parts as [SearchMethod, string, string, string];
  if (search !== fingerprint) throw orgErrors.invalidArgument('cursor', 'belongs to another search: page with the same query and filters');
  return { method, rank, recordedAt, search };
}

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
