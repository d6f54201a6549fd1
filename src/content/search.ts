/**
 * Cross-content search (spec 4.3 search_content, 4.4 GET /search; DESIGN 3): a case-insensitive substring
 * match on title, description or summary, and body, with results grouped by type and limited per type.
 *
 * Each table keeps a generated, lower-cased `search_text` column with a trigram (pg_trgm) GIN index, so
 * `search_text LIKE '%…%'` is answered from the index instead of a scan (queries of three or more
 * characters; shorter ones cannot form a trigram and scan, which is cheap for such rare queries).
 * `%`, `_` and `\` in the query are escaped, so they match themselves.
 *
 * Visibility: by default only published posts and entries and public roadmap items are found. Authenticated
 * callers may ask for everything (`includeHidden`: REST `preview=true` with the secret, and the MCP tool,
 * whose callers manage the content); each result then also carries its `status`, since drafts are mixed in.
 */
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Queryable } from '../platform/database.js';
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
  const search = async (type: SearchType): Promise<SearchResult[]> => {
    if (input.type !== 'all' && input.type !== type) return [];
    const rows = await searchQuery(ctx.db, type, input, { includeHidden });
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
