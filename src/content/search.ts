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
import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import type { ContentContext } from './context.js';
import { limitField } from './fields.js';
import { blogPosts, changelogEntries, roadmapItems } from './schema.js';

export const SEARCH_TYPES = ['blog', 'changelog', 'roadmap'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export const searchInput = z.strictObject({
  query: z.string().trim().min(1).max(200).describe('text to find, matched literally and case-insensitively'),
  type: z.enum(['all', ...SEARCH_TYPES]).default('all'),
  limit: limitField(10, 50).describe('1 to 50 results per type, default 10'),
});
export type SearchInput = z.infer<typeof searchInput>;

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
  const pattern = sql`lower(${likePattern(input.query)})`;
  const wanted = (type: SearchType) => input.type === 'all' || input.type === type;
  const search = (type: SearchType) => (wanted(type) ? SEARCHES[type](ctx, pattern, input.limit, options.includeHidden ?? false) : []);
  const [blog, changelog, roadmap] = await Promise.all(SEARCH_TYPES.map(search));
  return { results: { blog, changelog, roadmap } };
}

/** `%query%` with LIKE's wildcards and its escape character (backslash, PostgreSQL's default) escaped. */
export function likePattern(query: string): string {
  return `%${query.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

type Search = (ctx: ContentContext, pattern: SQL, limit: number, includeHidden: boolean) => Promise<SearchResult[]>;

/*
 * Within a type, items whose title matches come first, then the most recent. The WHERE clause is the
 * indexed `search_text LIKE pattern`; the ordering works on the matching rows only.
 */
const SEARCHES: Record<SearchType, Search> = {
  async blog(ctx, pattern, limit, includeHidden) {
    const rows = await ctx.db
      .select({ slug: blogPosts.slug, title: blogPosts.title, description: blogPosts.description, status: blogPosts.status })
      .from(blogPosts)
      .where(and(matches(blogPosts.searchText, pattern), includeHidden ? undefined : eq(blogPosts.status, 'published')))
      .orderBy(desc(titleMatches(blogPosts.title, pattern)), desc(sql`coalesce(${blogPosts.publishedAt}, ${blogPosts.updatedAt})`), desc(blogPosts.id))
      .limit(limit);
    return rows.map((row) => result('blog', row, includeHidden));
  },
  async changelog(ctx, pattern, limit, includeHidden) {
    const rows = await ctx.db
      .select({ slug: changelogEntries.slug, title: changelogEntries.title, description: changelogEntries.summary, status: changelogEntries.status })
      .from(changelogEntries)
      .where(and(matches(changelogEntries.searchText, pattern), includeHidden ? undefined : eq(changelogEntries.status, 'published')))
      .orderBy(
        desc(titleMatches(changelogEntries.title, pattern)),
        desc(sql`coalesce(${changelogEntries.publishedAt}, ${changelogEntries.updatedAt})`),
        desc(changelogEntries.id),
      )
      .limit(limit);
    return rows.map((row) => result('changelog', row, includeHidden));
  },
  async roadmap(ctx, pattern, limit, includeHidden) {
    const rows = await ctx.db
      .select({ slug: roadmapItems.slug, title: roadmapItems.title, description: roadmapItems.summary, status: roadmapItems.status })
      .from(roadmapItems)
      .where(and(matches(roadmapItems.searchText, pattern), includeHidden ? undefined : eq(roadmapItems.public, true)))
      .orderBy(desc(titleMatches(roadmapItems.title, pattern)), desc(roadmapItems.updatedAt))
      .limit(limit);
    return rows.map((row) => result('roadmap', row, includeHidden));
  },
};

/** The indexed predicate; `search_text` is already lower-cased by the database. */
function matches(searchText: AnyPgColumn, pattern: SQL): SQL {
  return sql`${searchText} LIKE ${pattern}`;
}

function titleMatches(title: AnyPgColumn, pattern: SQL): SQL {
  return sql`lower(${title}) LIKE ${pattern}`;
}

function result(type: SearchType, row: { slug: string; title: string; description: string | null; status: string }, withStatus: boolean): SearchResult {
  const found: SearchResult = { slug: row.slug, title: row.title, description: row.description, type };
  if (withStatus) found.status = row.status;
  return found;
}
