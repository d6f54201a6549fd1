/**
 * The content service's boundary (DESIGN 2): the values its interfaces name, the arguments of each of the 19
 * MCP tools (spec 4.3), and the REST request (spec 4.4) each write tool's REST twin answers. The MCP tools take
 * their input schemas from here (mcp/tools.ts) and the REST routes validate with the same operation schemas,
 * so interfaces B and C cannot disagree; the organization's content connector reads nothing else of content.
 *
 * Only zod and pure field checks (fields.ts): no tables, no domain functions, nothing that touches a database.
 */
import { z } from 'zod';
import { isoDate, limitField, slugSchema, versionSchema } from './fields.js';

// ---------------------------------------------------------------------------------------------------------
// The values the interfaces name (spec section 2); the database checks the same lists (schema.ts).

export const BLOG_STATUSES = ['draft', 'review', 'scheduled', 'published', 'archived'] as const;
export const CHANGELOG_STATUSES = ['draft', 'review', 'published'] as const;
export const CHANGELOG_TYPES = ['release', 'hotfix', 'beta', 'alpha'] as const;
export const ROADMAP_STATUSES = ['planned', 'in_progress', 'shipped', 'cancelled', 'considering'] as const;
export const ROADMAP_CATEGORIES = ['product', 'platform', 'integrations', 'api', 'dx'] as const;
export const ROADMAP_PRIORITIES = ['low', 'medium', 'high', 'critical'] as const;
export const ROADMAP_SORTS = ['priority', 'votes', 'updated_at'] as const;
export const SEARCH_TYPES = ['blog', 'changelog', 'roadmap'] as const;
export const ACTOR_TYPES = ['human', 'agent', 'system'] as const;
export const ACTIVITY_RESOURCES = ['blog', 'changelog', 'roadmap', 'asset'] as const;
export const ACTIVITY_ACTIONS = ['created', 'updated', 'published', 'status_changed', 'archived', 'bulk_updated', 'deleted'] as const;

/** Spec 2.6: "Defaults to a fixed team name string". */
export const DEFAULT_AUTHOR_NAME = 'Atrium Team';

// ---------------------------------------------------------------------------------------------------------
// Blog (spec 2.6). Hard caps stop abuse; the editorial thresholds of DESIGN 3 are checked on submit, so a
// draft can be saved before it is ready.

const postTitle = z.string().trim().min(1).max(200);
/** Spec 2.6 / section 8: an SEO description is 50 to 160 characters whenever one is given. */
const postDescription = z.string().min(50).max(160).describe('SEO description, 50 to 160 characters');
const postContent = z.string().max(200_000).describe('Markdown body');
const authorName = z.string().trim().min(1).max(200);
const authorEmail = z.email().max(320);
const postTags = z.array(z.string().trim().min(1).max(100)).max(50);
const ogImageUrl = z.url({ protocol: /^https?$/ }).max(2048).describe('Open Graph image URL');
const listCursor = isoDate.optional().describe('next_cursor of the previous page');

export const createPostInput = z.strictObject({
  title: postTitle,
  slug: slugSchema.optional().describe('Derived from the title when absent'),
  content: postContent.optional(),
  description: postDescription.optional(),
  author_name: authorName.optional().describe(`Default "${DEFAULT_AUTHOR_NAME}"`),
  tags: postTags.optional(),
  status: z.enum(['draft', 'published']).default('draft'),
  /** REST only (spec 2.6). */
  og_image_url: ogImageUrl.optional(),
});
export type CreatePostInput = z.infer<typeof createPostInput>;

/** Any of these; `null` clears an optional field. author_email and og_image_url are REST only (spec 2.6). */
export const updatePostInput = z.strictObject({
  title: postTitle.optional(),
  content: postContent.optional(),
  description: postDescription.nullable().optional(),
  author_name: authorName.optional(),
  author_email: authorEmail.nullable().optional(),
  tags: postTags.optional(),
  og_image_url: ogImageUrl.nullable().optional(),
});
export type UpdatePostInput = z.infer<typeof updatePostInput>;

export const listPostsInput = z.strictObject({
  limit: limitField(20, 100),
  tag: z.string().trim().min(1).max(100).optional(),
  cursor: listCursor,
});
export type ListPostsInput = z.infer<typeof listPostsInput>;

// ---------------------------------------------------------------------------------------------------------
// Changelog (spec 2.7)

const entryTitle = z.string().trim().min(1).max(200);
const entrySummary = z.string().max(1_000);
const entryContent = z.string().max(200_000).describe('Markdown body');
const entryType = z.enum(CHANGELOG_TYPES);
const highlights = z.array(z.string().trim().min(1).max(500)).max(50);

export const createEntryInput = z.strictObject({
  version: versionSchema,
  slug: slugSchema.optional().describe('Default: the version with dots as dashes, e.g. v1-4-0'),
  title: entryTitle.optional().describe('Default: "Release <version>"'),
  summary: entrySummary.optional(),
  content: entryContent.optional(),
  type: entryType.default('release'),
  highlights: highlights.optional(),
  status: z.enum(['draft', 'published']).default('draft'),
});
export type CreateEntryInput = z.infer<typeof createEntryInput>;

/** Any of these; `null` clears the summary. */
export const updateEntryInput = z.strictObject({
  title: entryTitle.optional(),
  summary: entrySummary.nullable().optional(),
  content: entryContent.optional(),
  type: entryType.optional(),
  highlights: highlights.optional(),
});
export type UpdateEntryInput = z.infer<typeof updateEntryInput>;

/** The status moves MCP update_changelog_entry may ask for (spec 3.2). */
export const entryStatusInput = z.enum(['draft', 'review', 'published']);
export type EntryStatusInput = z.infer<typeof entryStatusInput>;

export const listEntriesInput = z.strictObject({
  limit: limitField(20, 100),
  type: entryType.optional(),
  cursor: listCursor,
});
export type ListEntriesInput = z.infer<typeof listEntriesInput>;

// ---------------------------------------------------------------------------------------------------------
// Roadmap (spec 2.8). REST routes extend the write schemas with the actor; the MCP tools omit the REST-only
// `public` and `slug`.

/** Spec 2.8: "Target quarter, form Q<n> <year>". */
export const quarterSchema = z
  .string()
  .regex(/^Q[1-4] \d{4}$/, 'a quarter such as "Q3 2026"')
  .describe('target quarter, e.g. "Q3 2026"');

const itemTitle = z.string().trim().min(1).max(200);
const itemDescription = z.string().max(100_000).describe('Markdown');
const itemSummary = z.string().max(1_000);
const itemCategory = z.enum(ROADMAP_CATEGORIES);
export const itemStatus = z.enum(ROADMAP_STATUSES);
export const itemPriority = z.enum(ROADMAP_PRIORITIES);

export const createItemInput = z
  .object({
    slug: slugSchema.optional().describe('derived from the title when absent'),
    title: itemTitle,
    description: itemDescription.optional(),
    summary: itemSummary.optional(),
    category: itemCategory.optional(),
    status: itemStatus.optional().describe('default planned'),
    priority: itemPriority.optional().describe('default medium'),
    quarter: quarterSchema.optional(),
    public: z.boolean().optional().describe('REST only; default true: shown on the public roadmap'),
  })
  .strict();
export type CreateItemInput = z.infer<typeof createItemInput>;

/** `null` clears an optional field (e.g. an item no longer targeted at a quarter). */
export const updateItemInput = z
  .object({
    title: itemTitle.optional(),
    description: itemDescription.nullable().optional(),
    summary: itemSummary.nullable().optional(),
    category: itemCategory.nullable().optional(),
    status: itemStatus.optional(),
    priority: itemPriority.optional(),
    quarter: quarterSchema.nullable().optional(),
    public: z.boolean().optional(),
  })
  .strict();
export type UpdateItemInput = z.infer<typeof updateItemInput>;

export const listItemsQuery = z.strictObject({
  limit: limitField(50, 100),
  status: z.enum([...ROADMAP_STATUSES, 'all']).default('all'),
  category: itemCategory.optional(),
  quarter: quarterSchema.optional(),
  sort: z
    .enum(ROADMAP_SORTS)
    .default('priority')
    .describe('priority (critical first; ties by votes, then most recently updated), votes, or updated_at (newest first)'),
  cursor: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('next_cursor of the previous page: an ISO date for sort=updated_at, an opaque token for priority and votes'),
});
export type ListItemsQuery = z.infer<typeof listItemsQuery>;

// ---------------------------------------------------------------------------------------------------------
// Search and activity (spec 4.3, 4.4)

export const searchInput = z.strictObject({
  query: z.string().trim().min(1).max(200).describe('text to find, matched literally and case-insensitively'),
  type: z.enum(['all', ...SEARCH_TYPES]).default('all'),
  limit: limitField(10, 50).describe('results per type'),
});
export type SearchInput = z.infer<typeof searchInput>;

export const activityQuery = z.strictObject({
  resource: z.enum(ACTIVITY_RESOURCES).optional(),
  resource_id: z.string().min(1).max(200).optional().describe('the slug (or asset key) of one resource'),
  actor_type: z.enum(ACTOR_TYPES).optional(),
  action: z.enum(ACTIVITY_ACTIONS).optional(),
  after: isoDate.optional().describe('only entries strictly after this time'),
  before: isoDate.optional().describe('only entries strictly before this time'),
  limit: limitField(50, 200),
  cursor: isoDate.optional().describe('next_cursor of the previous page'),
});
export type ActivityQuery = z.infer<typeof activityQuery>;

// ---------------------------------------------------------------------------------------------------------
// The MCP tools' arguments (spec 4.3)

/** The slug (or changelog identifier) naming an existing record, as the REST path parameter takes it. */
function identifier(description: string) {
  return z.string().min(1).max(200).describe(description);
}
const postSlug = identifier('The post slug');
const entryIdentifier = identifier('The entry slug (e.g. v1-4-0) or its version (e.g. v1.4.0)');
const itemSlug = identifier('The roadmap item slug');

/** Each content MCP tool by name, with its arguments. */
export const CONTENT_TOOL_INPUTS = {
  list_blog_posts: listPostsInput,
  get_blog_post: z.strictObject({
    slug: postSlug,
    include_drafts: z.boolean().default(false).describe('Also find posts that are not published'),
  }),
  create_blog_post: createPostInput.omit({ slug: true, og_image_url: true }),
  update_blog_post: updatePostInput.pick({ title: true, content: true, description: true, tags: true }).extend({ slug: postSlug }),
  publish_blog_post: z.strictObject({ slug: postSlug }),
  delete_blog_post: z.strictObject({ slug: postSlug }),

  // Spec 4.3 gives this tool limit and type only.
  list_changelog_entries: listEntriesInput.pick({ type: true, limit: true }),
  get_changelog_entry: z.strictObject({ identifier: entryIdentifier }),
  create_changelog_entry: createEntryInput.omit({ slug: true }),
  update_changelog_entry: updateEntryInput.extend({
    identifier: entryIdentifier,
    status: entryStatusInput.optional().describe('draft to review, or review to published'),
  }),
  delete_changelog_entry: z.strictObject({ identifier: entryIdentifier }),

  list_roadmap_items: listItemsQuery.pick({ status: true, category: true, limit: true }),
  get_roadmap_item: z.strictObject({ slug: itemSlug }),
  create_roadmap_item: createItemInput.omit({ slug: true, public: true }),
  update_roadmap_item: updateItemInput.omit({ category: true, public: true }).extend({ slug: itemSlug }),
  delete_roadmap_item: z.strictObject({ slug: itemSlug }),

  search_content: searchInput,
  get_asset_upload_url: z.strictObject({}),
  get_activity_log: z.strictObject({ resource: z.enum(['blog', 'changelog', 'roadmap']).optional(), limit: activityQuery.shape.limit }),
};
export type ContentToolInputs = typeof CONTENT_TOOL_INPUTS;
export type ContentToolName = keyof ContentToolInputs;

// ---------------------------------------------------------------------------------------------------------
// The REST request of each write tool (spec 4.4), as the organization's content connector sends it: the
// tool's arguments without the path's key are the body, to which the sender adds actor_id and actor_type.

export interface ContentRequest {
  method: 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body: Record<string, unknown>;
}

type Args<Name extends ContentToolName> = z.infer<ContentToolInputs[Name]>;
const segment = (value: string) => encodeURIComponent(value);

/** Only the writes a capability makes sense for; reads need no gate. */
const WRITE_REQUESTS: { [Name in ContentToolName]?: (args: Args<Name>) => ContentRequest } = {
  create_blog_post: (args) => ({ method: 'POST', path: '/blog', body: args }),
  update_blog_post: ({ slug, ...body }) => ({ method: 'PATCH', path: `/blog/${segment(slug)}`, body }),
  publish_blog_post: ({ slug }) => ({ method: 'POST', path: `/blog/${segment(slug)}/publish`, body: {} }),
  delete_blog_post: ({ slug }) => ({ method: 'DELETE', path: `/blog/${segment(slug)}`, body: {} }),
  create_changelog_entry: (args) => ({ method: 'POST', path: '/changelog', body: args }),
  delete_changelog_entry: ({ identifier }) => ({ method: 'DELETE', path: `/changelog/${segment(identifier)}`, body: {} }),
  create_roadmap_item: (args) => ({ method: 'POST', path: '/roadmap', body: args }),
  update_roadmap_item: ({ slug, ...body }) => ({ method: 'PATCH', path: `/roadmap/${segment(slug)}`, body }),
  delete_roadmap_item: ({ slug }) => ({ method: 'DELETE', path: `/roadmap/${segment(slug)}`, body: {} }),
};

/** The tools a `content` connector's `action` may name (DESIGN 4.2). */
export const CONTENT_WRITE_ACTIONS = Object.keys(WRITE_REQUESTS) as ContentToolName[];

/**
 * The REST request for a write tool's arguments. The arguments are taken as given (the capability's input,
 * checked against the tool's schema by the caller); the content service validates the request again.
 */
export function contentRequest(action: string, args: Record<string, unknown>): ContentRequest {
  const build = WRITE_REQUESTS[action as ContentToolName] as ((args: Record<string, unknown>) => ContentRequest) | undefined;
  if (!build) throw new Error(`unknown content action ${action}`);
  return build(args);
}
