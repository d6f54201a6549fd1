/**
 * Reads of blog posts (spec 4.3, 4.4): the published list, the list of posts not yet public, and one post.
 * Both lists page newest first by a unique timestamp (workflow.ts `workflowListPage`).
 */
import { and, arrayContains, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { PageRequest } from '../../platform/paging.js';
import type { ContentContext } from '../context.js';
import type { ListPostsInput } from '../contract.js';
import { contentErrors } from '../errors.js';
import { isoDate, limitField } from '../fields.js';
import { cachedRead } from '../read-cache.js';
import { blogPosts, contentTotals } from '../schema.js';
import { workflowListPage } from '../workflow.js';
import { forThePublic, summaryColumns, toPost, toSummary, type BlogPost, type PostPage } from './records.js';

/** REST only (`GET /blog/drafts`). */
export const listDraftPostsInput = z.strictObject({
  limit: limitField(20, 100),
  cursor: isoDate.optional().describe('next_cursor of the previous page'),
});
export type ListDraftPostsInput = z.infer<typeof listDraftPostsInput>;

/** Published posts, newest first (spec 4.4); `total` counts every published post matching the tag. */
export async function listPublishedPosts(ctx: ContentContext, query: ListPostsInput): Promise<PostPage> {
  return cachedRead(ctx, 'blog', 'published', query, async () => {
    const matching = and(eq(blogPosts.status, 'published'), query.tag ? arrayContains(blogPosts.tags, [query.tag]) : undefined);
    // Counting a million published posts takes longer than the page: the database keeps that total (content_totals).
    const total = query.tag ? 'counted' : sql`(SELECT ${contentTotals.total} FROM ${contentTotals} WHERE ${contentTotals.list} = 'blog.published')`;
    const page = await pageOfPosts(ctx, matching, 'publishedAt', query, total);
    return { ...page, posts: page.posts.map(forThePublic) };
  });
}

/** Posts not yet public: draft, review and scheduled, newest created first. */
export async function listDraftPosts(ctx: ContentContext, query: ListDraftPostsInput): Promise<PostPage> {
  return cachedRead(ctx, 'blog', 'drafts', query, () =>
    pageOfPosts(ctx, inArray(blogPosts.status, ['draft', 'review', 'scheduled']), 'createdAt', query),
  );
}

async function pageOfPosts(ctx: ContentContext, where: SQL | undefined, key: 'publishedAt' | 'createdAt', query: PageRequest, total?: 'counted' | SQL): Promise<PostPage> {
  const page = await workflowListPage(ctx.db, ctx.db.select(summaryColumns).from(blogPosts).$dynamic(), blogPosts, where, key, query, total);
  return { posts: page.rows.map(toSummary), next_cursor: page.next_cursor, total: page.total };
}

/** A published post; with `include_drafts` (REST `preview`, authenticated callers only) a post in any state. */
export async function getPost(ctx: ContentContext, slug: string, options: { include_drafts?: boolean } = {}): Promise<BlogPost> {
  const includeDrafts = options.include_drafts ?? false;
  return cachedRead(ctx, 'blog', 'post', { slug, include_drafts: includeDrafts }, async () => {
    const [row] = await ctx.db.select().from(blogPosts).where(eq(blogPosts.slug, slug)).limit(1);
    if (!row || (row.status !== 'published' && !includeDrafts)) throw contentErrors.notFound('blog post', slug);
    return includeDrafts ? toPost(row) : forThePublic(toPost(row));
  });
}
