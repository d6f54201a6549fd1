/**
 * Cross-content search (spec 4.3 search_content, 4.4 GET /search; DESIGN 3): a case-insensitive substring
 * match on title, description or summary, and body, with results grouped by type and limited per type.
 *
 * Each table keeps a generated, lower-cased `search_text` column with a trigram (pg_trgm) GIN index, so
 * `search_text LIKE '%…%'` is answered from the index instead of a scan (queries of three or more
 * characters; shorter ones cannot form a trigram and scan, which is cheap for such rare queries).
 * `%`, `_` and `\` in the query are escaped, so they match themselves.
 *
 * The index finds every match, and each one is then read to be ordered: at a million posts a word in one post
 * in 277 is 3,600 rows read for a page of ten (14 ms: the rows, and the posting lists of the word's common
 * trigrams). So a big table (searchNewestFirst) looks first where a page usually is: among the newest 5,000 rows,
 * read in order (3–4 ms whatever the word), and, since title matches come first, in a trigram index of the
 * titles alone. Only when those leave the page short does it ask the whole-table index, which then has only a
 * rare word's few matches to give.
 *
 * Visibility: by default only published posts and entries and public roadmap items are found. Authenticated
 * callers may ask for everything (`includeHidden`: REST `preview=true` with the secret, and the MCP tool,
 * whose callers manage the content); each result then also carries its `status`, since drafts are mixed in.
 */
import { and, desc, eq, getTableName, sql } from 'drizzle-orm';
import { queryRows, type Queryable } from '../platform/database.js';
import type { ContentContext } from './context.js';
import { SEARCH_TYPES, type SearchInput } from './contract.js';
import { cachedRead } from './read-cache.js';
import { blogPosts, changelogEntries, roadmapItems } from './schema.js';

export type SearchType = (typeof SEARCH_TYPES)[number];

export interface SearchResult {
  slug: string;
  title: string;
  /** The post's description; for changelog entries and roadmap items, their summary. */
  description: string | null;
  type: SearchType;
  /** Only when hidden content was included. */
  status?: string;
}

export type SearchResults = Record<SearchType, SearchResult[]>;

export interface SearchOptions {
  /** Include drafts, posts in review or scheduled, and non-public roadmap items. */
  includeHidden?: boolean;
}

/** Every type is always present in `results`; types not asked for are empty. */
export async function searchContent(
  ctx: ContentContext,
  input: SearchInput,
  options: SearchOptions = {},
): Promise<{ results: SearchResults }> {
  const includeHidden = options.includeHidden ?? false;
  return cachedRead(ctx, 'search', 'search', { ...input, include_hidden: includeHidden }, () => searchAll(ctx, input, includeHidden));
}

async function searchAll(ctx: ContentContext, input: SearchInput, includeHidden: boolean): Promise<{ results: SearchResults }> {
  const rowsOf = await estimatedRows(ctx.db);
  const search = async (type: SearchType): Promise<SearchResult[]> => {
    if (input.type !== 'all' && input.type !== type) return [];
    const big = (rowsOf.get(type) ?? 0) >= NEWEST_FIRST_FROM_ROWS;
    const rows = big ? await searchNewestFirst(ctx.db, type, input, { includeHidden }) : await searchQuery(ctx.db, type, input, { includeHidden });
    return rows.map((row) => {
      const found: SearchResult = { slug: row.slug, title: row.title, description: row.description, type };
      if (includeHidden) found.status = row.status;
      return found;
    });
  };
  const [blog, changelog, roadmap] = await Promise.all(SEARCH_TYPES.map(search));
  return { results: { blog, changelog, roadmap } };
}

/** `%query%` with LIKE's wildcards and its escape character (backslash, PostgreSQL's default) escaped. */
export function likePattern(query: string): string {
  return `%${query.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/**
 * The query for one type (exported so a test can EXPLAIN exactly what runs). The WHERE clause is the
 * indexed `search_text LIKE pattern`; within a type, items whose title matches come first, then the most
 * recent, and that ordering only touches the matching rows.
 */
export function searchQuery(db: Queryable, type: SearchType, input: Pick<SearchInput, 'query' | 'limit'>, options: SearchOptions = {}) {
  const pattern = sql`lower(${likePattern(input.query)})`;
  const { table, description, visible, recency } = SOURCES[type];
  return db
    .select({ slug: table.slug, title: table.title, description, status: table.status })
    .from(table)
    .where(and(sql`${table.searchText} LIKE ${pattern}`, options.includeHidden ? undefined : visible))
    .orderBy(desc(sql`lower(${table.title}) LIKE ${pattern}`), desc(recency), desc(table.id))
    .limit(input.limit);
}

/**
 * From how many rows a table is searched newest first. Below it every match is cheap to read, and the walk
 * through NEWEST_WINDOW rows would be most of the work (3–4 ms, more on the embedded database with long bodies);
 * above it a common word's matches are what costs, and they grow with the table.
 */
const NEWEST_FIRST_FROM_ROWS = 100_000;

/**
 * How many of the newest rows searchNewestFirst reads before it asks the trigram index instead: a page of ten
 * is there for any word in more than one row in 500. Measured at a million posts on PostgreSQL, the walk costs
 * about 0.6 µs a row (3 ms) and the index about 4 µs a match: the worst word, one just too rare for the window
 * (2,000 matches at a million rows), costs both, about 11 ms; a longer walk would cost every search more.
 */
const NEWEST_WINDOW = 5_000;

/**
 * Each table's row count as the planner knows it (pg_class.reltuples, kept by ANALYZE, autovacuum and CREATE
 * INDEX; -1 before any ran, as on an embedded database that was only written to). An estimate is enough: both
 * ways of searching answer the same, one is only faster than the other. So it is read once a minute per
 * database handle, not per search: that round trip cost a small table's searches 10–20 % of their rate on
 * PostgreSQL under 50 connections (one query more for three).
 */
async function estimatedRows(db: Queryable): Promise<Map<SearchType, number>> {
  const known = tableSizes.get(db);
  if (known && performance.now() - known.readAt < TABLE_SIZES_FOR_MS) return known.rows;
  const tables = SEARCH_TYPES.map((type) => getTableName(SOURCES[type].table));
  const found = await queryRows<{ name: string; rows: number }>(
    db,
    sql`SELECT relname AS name, reltuples AS rows FROM pg_class WHERE oid IN (${sql.join(tables.map((table) => sql`${table}::regclass`), sql`, `)})`,
  );
  const rows = new Map(SEARCH_TYPES.map((type, i) => [type, Number(found.find((row) => row.name === tables[i])?.rows ?? 0)]));
  tableSizes.set(db, { rows, readAt: performance.now() });
  return rows;
}

const TABLE_SIZES_FOR_MS = 60_000;
const tableSizes = new WeakMap<Queryable, { rows: Map<SearchType, number>; readAt: number }>();

type FoundRow = Awaited<ReturnType<typeof searchQuery>>[number];

/**
 * searchQuery's answer, read where it usually is on a big table. One statement (one snapshot); its later parts run
 * only when the earlier ones left the page short (their gates are one-time filters: the planner skips a part's
 * scan, not just its rows):
 * 1. `windowed`: the matches among the newest NEWEST_WINDOW rows, read newest first (a bounded walk, whatever
 *    the word);
 * 2. `titled`, the title matches, which come first: the window's own when it holds a page of them (every older one
 *    comes after them), else all of them, from the titles' trigram index (few, or the window would hold a page);
 * 3. the window's other matches, newest first;
 * 4. when those leave the page short, searchQuery itself past the rows already found: `titled` then holds every
 *    title match, and every match in the window comes before any older one, in searchQuery's order.
 * So the parts' rows, part by part, are searchQuery's first rows. Exported for a test to compare the two.
 */
export function searchNewestFirst(db: Queryable, type: SearchType, input: Pick<SearchInput, 'query' | 'limit'>, options: SearchOptions = {}): Promise<FoundRow[]> {
  const pattern = sql`lower(${likePattern(input.query)})`;
  const { table, description, visible, recency } = SOURCES[type];
  const shown = options.includeHidden ? sql`true` : visible;
  const titleMatches = sql`lower(${table.title}) LIKE ${pattern}`;
  const columns = sql`${table.slug} AS slug, ${table.title} AS title, ${description} AS description, ${table.status} AS status, ${recency} AS recency, ${table.id} AS id`;
  const found = sql`slug, title, description, status, recency, id`;
  // The walk tests each text itself, with strpos (the same literal, lower-cased substring test as the escaped
  // LIKE, in half its time: 1 ms instead of 2 for the window); the indexes only answer LIKE.
  const literal = sql`lower(${input.query})`;
  const windowTitles = sql`(SELECT count(*) FROM windowed WHERE title_matches)`;
  const foundBefore = sql`(SELECT count(*) FROM titled) + (SELECT count(*) FROM windowed WHERE NOT title_matches)`;
  // Every part but the walk is ordered as searchQuery orders, the title test first (true for every title match):
  // an ORDER BY the recency index could serve would let the planner walk it, filtering, through the whole table.
  // The gates of the two whole-table parts stand outside their subqueries (a LIMIT keeps them there), so a
  // closed gate also keeps the planner's parallel workers, if it chose them for a common word, from starting.
  return queryRows<FoundRow>(
    db,
    sql`WITH windowed AS MATERIALIZED (
          SELECT ${found}, strpos(lower(title), ${literal}) > 0 AS title_matches
          FROM (SELECT ${columns}, ${table.searchText} AS search_text FROM ${table} WHERE ${shown}
                ORDER BY ${recency} DESC, ${table.id} DESC LIMIT ${NEWEST_WINDOW}) AS newest
          WHERE strpos(search_text, ${literal}) > 0
        ), titled AS MATERIALIZED (
          (SELECT ${found} FROM windowed WHERE title_matches AND ${windowTitles} >= ${input.limit}
           ORDER BY recency DESC, id DESC LIMIT ${input.limit})
          UNION ALL
          SELECT * FROM (SELECT ${columns} FROM ${table} WHERE ${titleMatches} AND ${shown}
                         ORDER BY ${titleMatches} DESC, ${recency} DESC, ${table.id} DESC LIMIT ${input.limit}) AS every_title
          WHERE ${windowTitles} < ${input.limit}
        )
        SELECT slug, title, description, status FROM (
          SELECT 1 AS part, * FROM titled
          UNION ALL
          (SELECT 2, ${found} FROM windowed WHERE NOT title_matches AND (SELECT count(*) FROM titled) < ${input.limit}
           ORDER BY recency DESC, id DESC LIMIT ${input.limit})
          UNION ALL
          SELECT 3, * FROM (SELECT ${columns} FROM ${table} WHERE ${table.searchText} LIKE ${pattern} AND ${shown}
                            ORDER BY ${titleMatches} DESC, ${recency} DESC, ${table.id} DESC LIMIT ${input.limit} OFFSET ${foundBefore}) AS older
          WHERE ${foundBefore} < ${input.limit}
        ) AS parts
        ORDER BY part, recency DESC, id DESC LIMIT ${input.limit}`,
  );
}

/** Where each type keeps its text, what the public may see, and what "most recent" means for it. */
const SOURCES = {
  blog: {
    table: blogPosts,
    description: blogPosts.description,
    visible: eq(blogPosts.status, 'published'),
    recency: sql`coalesce(${blogPosts.publishedAt}, ${blogPosts.updatedAt})`,
  },
  changelog: {
    table: changelogEntries,
    description: changelogEntries.summary,
    visible: eq(changelogEntries.status, 'published'),
    recency: sql`coalesce(${changelogEntries.publishedAt}, ${changelogEntries.updatedAt})`,
  },
  roadmap: {
    table: roadmapItems,
    description: roadmapItems.summary,
    visible: eq(roadmapItems.public, true),
    recency: sql`${roadmapItems.updatedAt}`,
  },
};
