/**
 * Search is PostgreSQL full-text search over a generated `tsvector` (title A, body B, tags C) with a GIN
 * index, ranked with `ts_rank`; when it finds nothing — a partial word (`kube` for `kubernetes`), a short
 * one inside another (`db` in `mongodb`) — the trigram fallback matches substrings of a lower-cased copy of
 * the text (pg_trgm, GIN), newest first.
 *
 * Ranking every match costs a read of every matching row (12,000 for a common word at a million items), so
 * when the caller sees more than `RECENT_WINDOW` items the search runs in two tiers: first the matches among
 * the newest `RECENT_WINDOW` visible items, ranked — found in memory_recent, which keeps each space's newest
 * items with a GIN index of their own, so only those rows are fetched — then, once they are exhausted, the older
 * matches, ranked. The boundary (the `recorded_at` of the oldest item of the window) is fixed by the first page
 * and kept in the cursor. With fewer visible items there is one tier, and the order is exactly (rank, recorded_at).
 *
 * Cursors are opaque (base64url JSON): which of the two searches the first page used, the tier boundary, and the
 * tier, rank and `recorded_at` of the last item returned. Pages are ordered by (tier, rank desc, recorded_at
 * desc), and `recorded_at` is unique per item (platform/time.ts), so the next page is exactly the items after
 * that triple: none skipped, none repeated, even when items are recorded while a client pages. A cursor also
 * carries a fingerprint of the search it belongs to; used with another search it is refused, and one whose rank
 * or time was changed to something PostgreSQL cannot read is refused too (platform/paging.ts).
 */
import { createHash } from 'node:crypto';
import { and, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { canonicalJson } from '../../platform/canonical-json.js';
import type { Queryable } from '../../platform/database.js';
import { cursorParts, decodeOpaqueCursor, encodeOpaqueCursor, keysetPage, takePage } from '../../platform/paging.js';
import { isIsoDate, toIso } from '../../platform/time.js';
import { orgErrors } from '../errors.js';
import { memoryItems, memoryRecent } from '../schema.js';
import { type MemoryItemWithHistory, type MemoryKind, itemColumns, searchMemoryInput, type MemoryCaller, type MemoryPage, type SearchMemoryInput, toMemoryItem } from './records.js';

/** The item and every version of it, newest first; an item outside the caller's spaces is `not_found`. */
export async function getMemory(db: Queryable, memoryId: string, caller: MemoryCaller): Promise<MemoryItemWithHistory> {
  const [row] = await db.select(itemColumns).from(memoryItems).where(eq(memoryItems.id, memoryId));
  if (!row || !caller.spaceIds.includes(row.spaceId)) throw orgErrors.notFound('memory item');
  // Versions never leave their space, so the whole lineage is visible with its first item.
  const versions = await db.select(itemColumns).from(memoryItems).where(eq(memoryItems.lineageId, row.lineageId)).orderBy(desc(memoryItems.recordedAt));
  return { ...toMemoryItem(row), history: versions.map(toMemoryItem) };
}

/**
 * The current items of the caller's spaces (or of `space_id`, one of them), most recently recorded first: what
 * a person sees of memory before searching. Paged by `recorded_at`, unique per item, read from
 * memory_items_space_idx for one space or memory_items_recorded_idx across several.
 */
export async function listRecentMemory(
  db: Queryable,
  input: { space_id?: string; kind?: MemoryKind; limit: number; cursor?: string },
  caller: MemoryCaller,
): Promise<MemoryPage> {
  if (input.space_id && !caller.spaceIds.includes(input.space_id)) throw orgErrors.notFound('space');
  if (input.cursor !== undefined && !isIsoDate(input.cursor)) throw orgErrors.invalidArgument('cursor', 'not a cursor this list returned');
  const spaceIds = input.space_id ? [input.space_id] : [...caller.spaceIds];
  if (spaceIds.length === 0) return { items: [], next_cursor: null };
  const where = and(
    spaceIds.length === 1 ? eq(memoryItems.spaceId, spaceIds[0]) : inArray(memoryItems.spaceId, spaceIds),
    eq(memoryItems.status, 'current'),
    input.kind ? eq(memoryItems.kind, input.kind) : undefined,
  );
  const order = { key: 'recordedAt', column: memoryItems.recordedAt, direction: 'newest_first' } as const;
  const page = await keysetPage(db, { select: db.select(itemColumns).from(memoryItems).$dynamic(), from: memoryItems, where, order }, input);
  return { items: page.rows.map(toMemoryItem), next_cursor: page.next_cursor };
}

/**
 * `all`: every word must match (web-search syntax, what `search_memory` asks for). `any`: items matching
 * more of the words rank higher, none is required — for the assistant, whose input is a question.
 */
export type MatchMode = 'all' | 'any';

/** Which search served the first page; later pages use the same. */
type SearchMethod = 'fts' | 'trigram';

/**
 * How many of the newest visible items the first tier ranks: a common word (1 % of items) has about a hundred
 * matches there, enough for any page, and fetching them costs under a millisecond. memory_recent keeps at least as
 * many of each space (its trigger in drizzle/0009 says 10000: change both together).
 */
export const RECENT_WINDOW = 10_000;

/** 0: the newest items, from the boundary on; 1: the items recorded before it (all items when there is none). */
type Tier = 0 | 1;

interface Cursor {
  method: SearchMethod;
  /** The `recorded_at` of the oldest item of the first tier; null when the search had a single tier. */
  boundary: string | null;
  tier: Tier;
  rank: string;
  recordedAt: string;
  search: string;
}

export interface SearchOptions {
  match?: MatchMode;
  /** How many of the newest items the first tier ranks (`RECENT_WINDOW`). */
  recentWindow?: number;
  /**
   * Reads the first tier's boundary through a cache: `read` under `key` (org/read-cache.ts). The boundary moves
   * only when items are recorded, and reading it is an index scan of `recentWindow` entries (about 2 ms at a
   * million items), so the searches of a second can share it. Without it every first page reads it.
   */
  cacheBoundary?: (key: Record<string, unknown>, read: () => Promise<string | null>) => Promise<string | null>;
}

/** Ranked items visible to the caller (see the module comment for what is visible when). */
export async function searchMemory(
  db: Queryable,
  rawInput: SearchMemoryInput,
  caller: MemoryCaller,
  options: SearchOptions = {},
): Promise<MemoryPage> {
  const input = searchMemoryInput.parse(rawInput);
  const match = options.match ?? 'all';
  if (input.space_id && !caller.spaceIds.includes(input.space_id)) throw orgErrors.notFound('space');
  const fingerprint = searchFingerprint(input, match);
  const cursor = input.cursor === undefined ? undefined : decodeCursor(input.cursor, fingerprint);
  const filters = visibleWhere(input, caller);

  const spaces = input.space_id ? [input.space_id] : [...caller.spaceIds].sort();
  const boundary = cursor ? cursor.boundary : await firstTierBoundary(db, spaces, options);
  let method: SearchMethod = cursor?.method ?? 'fts';
  let rows = method === 'fts' ? await tieredPage(db, ftsSearch(input.query, match, spaces), filters, boundary, cursor, input.limit) : [];
  if (method === 'trigram' || (!cursor && rows.length === 0)) {
    method = 'trigram';
    const search = await trigramSearch(db, input.query, match);
    rows = search ? await tieredPage(db, search, filters, boundary, cursor, input.limit) : [];
  }
  const page = takePage(rows, input.limit, (last) =>
    encodeCursor({ method, boundary, tier: last.tier, rank: last.rank, recordedAt: toIso(last.recordedAt), search: fingerprint }),
  );
  return { items: page.rows.map(toMemoryItem), next_cursor: page.next_cursor };
}

/**
 * The `recorded_at` of the `window`-th newest item of the searched spaces (sorted: a cache key; the other filters
 * rarely exclude many), read from the space's index; null when there are no more than `window` of them.
 */
async function firstTierBoundary(db: Queryable, spaces: string[], options: SearchOptions): Promise<string | null> {
  if (spaces.length === 0) return null;
  const window = options.recentWindow ?? RECENT_WINDOW;
  // memory_recent keeps each space's newest RECENT_WINDOW items: a wider first tier would miss some.
  if (window > RECENT_WINDOW) throw new Error(`search: the first tier holds at most ${RECENT_WINDOW} items, not ${window}`);
  const read = () => recentBoundary(db, spaces, window);
  return options.cacheBoundary ? options.cacheBoundary({ spaces, window }, read) : read();
}

async function recentBoundary(db: Queryable, spaces: string[], window: number): Promise<string | null> {
  const [row] = await db
    .select({ recordedAt: memoryItems.recordedAt })
    .from(memoryItems)
    .where(spaces.length === 1 ? eq(memoryItems.spaceId, spaces[0]) : inArray(memoryItems.spaceId, spaces))
    .orderBy(desc(memoryItems.recordedAt))
    .offset(window - 1)
    .limit(1);
  return row ? toIso(row.recordedAt) : null;
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

/**
 * A way of matching and ranking items: its match condition and a `real` rank (higher is better), and where the
 * first tier's matches are better found another way than `matches` (faster, or at a bounded cost), `recentMatches`.
 */
interface RankedSearch {
  matches: SQL;
  rank: SQL;
  recentMatches?: SQL;
}

/**
 * The first tier's matches are looked up in memory_recent's GIN index, which holds only each space's newest
 * items (schema.ts): a word's posting list there is about a hundred entries, where memory_items_search_idx holds
 * every item with the word.
 */
function ftsSearch(query: string, match: MatchMode, spaces: string[]): RankedSearch {
  const tsquery =
    match === 'all'
      ? sql`websearch_to_tsquery('english', ${query})`
      : sql`replace(plainto_tsquery('english', ${query})::text, ' & ', ' | ')::tsquery`;
  const recent = sql`SELECT ${memoryRecent.itemId} FROM ${memoryRecent} WHERE ${memoryRecent.search} @@ ${tsquery} AND ${inArray(memoryRecent.spaceId, spaces)}`;
  return {
    matches: sql`${memoryItems.search} @@ ${tsquery}`,
    rank: sql`ts_rank(${memoryItems.search}, ${tsquery})`,
    recentMatches: sql`${memoryItems.id} IN (${recent})`,
  };
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
  const joiner = match === 'all' ? sql` AND ` : sql` OR `;
  const substrings = kept.map((word) => sql`${memoryItems.searchText} LIKE ${`%${escapeLike(word)}%`}`);
  // The first tier tests each of the newest items with strpos, which no index serves: at most RECENT_WINDOW rows
  // whatever the planner estimates. With LIKE the planner chose between walking the recorded_at index and the
  // trigram index by its estimate of the fragment's frequency, read off ANALYZE's sample; a common fragment the
  // sample missed went through the trigram index, decoding its trigrams' posting lists over the whole table
  // (64–82 ms for one fragment in 200 at a million items, bench/RESULTS.md session 37; 0.7 ms tested row by row).
  const contained = kept.map((word) => sql`strpos(${memoryItems.searchText}, ${word}) > 0`);
  return { matches: sql`(${sql.join(substrings, joiner)})`, rank: sql`0::real`, recentMatches: sql`(${sql.join(contained, joiner)})` };
}

function escapeLike(word: string): string {
  return word.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/**
 * One page (plus one row, to know whether another follows) after the cursor: the rest of the first tier, then as
 * much of the second as the page still needs — in one statement. PostgreSQL runs the branches of a UNION ALL in
 * order and stops pulling at its LIMIT, so the second tier is ranked only when the first holds less than the page.
 * (The branches cannot interleave: only a Parallel Append runs branches side by side, and PostgreSQL never runs a
 * subquery with a LIMIT inside a parallel worker, so never under one. A branch may gather workers of its own;
 * EXPLAIN with parallel plans made free shows the Append running the branches one after the other, PostgreSQL 15.)
 */
function tieredPage(db: Queryable, search: RankedSearch, filters: SQL, boundary: string | null, cursor: Cursor | undefined, limit: number) {
  const at = boundary === null ? undefined : sql`${boundary}::timestamptz`;
  const older = rankedPage(db, search, and(filters, at ? sql`${memoryItems.recordedAt} < ${at}` : undefined)!, cursor?.tier === 1 ? cursor : undefined, limit, 1);
  if (!at || cursor?.tier === 1) return older;
  const recentSearch = search.recentMatches ? { ...search, matches: search.recentMatches } : search;
  const recent = rankedPage(db, recentSearch, and(filters, sql`${memoryItems.recordedAt} >= ${at}`)!, cursor, limit, 0);
  return recent.unionAll(older).limit(limit + 1);
}

/** Up to `limit` + 1 items of one tier after the cursor's (rank, recorded_at), each marked with its tier. */
function rankedPage(db: Queryable, search: RankedSearch, filters: SQL, cursor: Cursor | undefined, limit: number, tier: Tier) {
  const after = cursor
    ? sql`(${search.rank} < ${cursor.rank}::real OR (${search.rank} = ${cursor.rank}::real AND ${memoryItems.recordedAt} < ${cursor.recordedAt}::timestamptz))`
    : undefined;
  return db
    .select({ ...itemColumns, rank: sql<string>`(${search.rank})::text`, tier: sql<Tier>`${sql.raw(String(tier))}` })
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
  return encodeOpaqueCursor([cursor.method, cursor.boundary, cursor.tier, cursor.rank, cursor.recordedAt, cursor.search]);
}

const isMethod = (part: unknown): part is SearchMethod => part === 'fts' || part === 'trigram';
const isBoundary = (part: unknown): part is string | null => part === null || cursorParts.instant(part);
const isTier = (part: unknown): part is Tier => part === 0 || part === 1;

function decodeCursor(text: string, fingerprint: string): Cursor {
  const parts = decodeOpaqueCursor(text, [isMethod, isBoundary, isTier, cursorParts.real, cursorParts.instant, cursorParts.text]);
  if (!parts) throw orgErrors.invalidArgument('cursor', 'not a cursor this service returned');
  const [method, boundary, tier, rank, recordedAt, search] = parts as [SearchMethod, string | null, Tier, string, string, string];
  if (search !== fingerprint) throw orgErrors.invalidArgument('cursor', 'belongs to another search: page with the same query and filters');
  // A first-tier cursor without the tier's boundary would start the second tier over: not one this service wrote.
  if (tier === 0 && boundary === null) throw orgErrors.invalidArgument('cursor', 'not a cursor this service returned');
  return { method, boundary, tier, rank, recordedAt, search };
}
