/**
 * The blog post record (spec 2.6) as both interfaces return it, and how a stored row becomes one. An
 * author's email address is for the editorial team: public reads leave it out (`forThePublic`).
 */
import { getTableColumns } from 'drizzle-orm';
import { z } from 'zod';
import { toIso } from '../../platform/time.js';
import { BLOG_STATUSES } from '../contract.js';
import { blogPosts } from '../schema.js';
import { workflowDates, workflowPage } from '../workflow.js';

export type BlogStatus = (typeof BLOG_STATUSES)[number];

/** A post as lists show it: everything but the markdown body. */
export const blogPostSummary = z.object({
  slug: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  author_name: z.string(),
  author_email: z.string().nullable().optional().describe('Only on authenticated reads (preview, drafts, writes)'),
  tags: z.array(z.string()),
  status: z.enum(BLOG_STATUSES),
  og_image_url: z.string().nullable(),
  publish_at: z.string().nullable().describe('When a scheduled post publishes itself'),
  ...workflowDates,
});
export type BlogPostSummary = z.infer<typeof blogPostSummary>;

/** The post record of spec 2.6. */
export const blogPost = blogPostSummary.extend({ content: z.string() });
export type BlogPost = z.infer<typeof blogPost>;

export const postPage = workflowPage('posts', blogPostSummary);
export type PostPage = z.infer<typeof postPage>;

export type PostRow = typeof blogPosts.$inferSelect;
const { content: _content, searchText: _searchText, ...listColumns } = getTableColumns(blogPosts);
/** The columns lists read: all but the markdown body and the search text. */
export const summaryColumns = listColumns;

export function toSummary(row: Omit<PostRow, 'content' | 'searchText'>): BlogPostSummary {
  return {
    slug: row.slug,
    title: row.title,
    description: row.description,
    author_name: row.authorName,
    author_email: row.authorEmail,
    tags: row.tags,
    status: row.status as BlogStatus,
    og_image_url: row.ogImageUrl,
    publish_at: toIso(row.publishAt),
    published_at: toIso(row.publishedAt),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

export function toPost(row: PostRow): BlogPost {
  const { slug, title, ...rest } = toSummary(row);
  return { slug, title, content: row.content, ...rest };
}

/** An author's email address is for the editorial team, not for every visitor of the public site. */
export function forThePublic<T extends BlogPostSummary>(post: T): T {
  const { author_email: _hidden, ...rest } = post;
  return rest as T;
}
