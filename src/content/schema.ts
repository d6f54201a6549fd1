/**
 * The content service's tables. Enumerated values are also checked by the database, so no path around
 * the domain layer can store a state the state machines of spec section 3 do not know.
 */
import { sql, type SQL } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  type AnyPgColumn,
} from 'drizzle-orm/pg-core';
import {
  ACTIVITY_ACTIONS,
  ACTIVITY_RESOURCES,
  ACTOR_TYPES,
  BLOG_STATUSES,
  CHANGELOG_STATUSES,
  CHANGELOG_TYPES,
  ROADMAP_CATEGORIES,
  ROADMAP_PRIORITIES,
  ROADMAP_STATUSES,
} from './contract.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'string' });
const created = () => ts('created_at').notNull().defaultNow();
const updated = () => ts('updated_at').notNull().defaultNow();

function oneOf(column: AnyPgColumn, values: readonly string[]): SQL {
  return sql`${column} IN (${sql.raw(values.map((value) => `'${value}'`).join(', '))})`;
}

/** An activity entry's changed fields: `{ field: [before, after] }`. */
export type Changes = Record<string, [unknown, unknown]>;

/**
 * GIN's fast-update pending list is merged only by (auto)vacuum, which the embedded database never runs;
 * while it holds entries the planner prices the index high and scans the table instead (measured: 87 ms
 * instead of 0.1 ms at 10,000 posts). Content writes are rare, so each one updates the index directly.
 */
const searchIndexOptions = { fastupdate: false };

/** Lower-cased text that search matches by substring, kept by the database and indexed with trigrams. */
const searchText = (...columns: string[]) =>
  text('search_text').generatedAlwaysAs(
    sql.raw(`lower(${columns.map((column) => `coalesce(${column}, '')`).join(` || ' ' || `)})`),
  );

/**
 * The titles alone, lower-cased, with trigrams: on a big table search finds the title matches (listed first) without
 * reading every post that mentions the words somewhere (search.ts).
 */
const titleSearchIndex = (name: string, title: AnyPgColumn) =>
  index(name).using('gin', sql`lower(${title}) gin_trgm_ops`).with(searchIndexOptions);

export const blogPosts = pgTable(
  'blog_posts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    slug: text('slug').notNull().unique(),
    title: text('title').notNull(),
    content: text('content').notNull().default(''),
    description: text('description'),
    authorName: text('author_name').notNull(),
    authorEmail: text('author_email'),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    status: text('status').notNull().default('draft'),
    ogImageUrl: text('og_image_url'),
    /** When a scheduled post publishes itself. */
    publishAt: ts('publish_at'),
    /** Unique per post (see platform/time.ts): the sort key and cursor of the public list. */
    publishedAt: ts('published_at'),
    createdAt: created(),
    updatedAt: updated(),
    searchText: searchText('title', 'description', 'content'),
  },
  (table) => [
    check('blog_posts_status_check', oneOf(table.status, BLOG_STATUSES)),
    index('blog_posts_published_idx').on(table.publishedAt.desc()).where(sql`status = 'published'`),
    index('blog_posts_tags_idx').using('gin', table.tags),
    index('blog_posts_search_idx').using('gin', sql`${table.searchText} gin_trgm_ops`).with(searchIndexOptions),
    titleSearchIndex('blog_posts_title_search_idx', table.title),
    // Search's walk through the newest posts on a big table (search.ts): its order, "most recent" of any status.
    index('blog_posts_recency_idx').on(sql`(coalesce(${table.publishedAt}, ${table.updatedAt})) DESC`, table.id.desc().nullsFirst()),
  ],
);

/**
 * Totals of lists too long to count on each read, kept by statement triggers (drizzle/0006_million_rows.sql):
 * `blog.published`, the published posts `GET /blog` reports as `total`.
 */
export const contentTotals = pgTable('content_totals', {
  list: text('list').primaryKey(),
  total: bigint('total', { mode: 'number' }).notNull(),
});

export const changelogEntries = pgTable(
  'changelog_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    slug: text('slug').notNull().unique(),
    version: text('version').notNull().unique(),
    title: text('title').notNull(),
    summary: text('summary'),
    content: text('content').notNull().default(''),
    type: text('type').notNull().default('release'),
    highlights: text('highlights').array().notNull().default(sql`'{}'::text[]`),
    status: text('status').notNull().default('draft'),
    publishedAt: ts('published_at'),
    createdAt: created(),
    updatedAt: updated(),
    searchText: searchText('title', 'summary', 'content'),
  },
  (table) => [
    check('changelog_entries_status_check', oneOf(table.status, CHANGELOG_STATUSES)),
    check('changelog_entries_type_check', oneOf(table.type, CHANGELOG_TYPES)),
    index('changelog_entries_published_idx').on(table.publishedAt.desc()).where(sql`status = 'published'`),
    index('changelog_entries_search_idx').using('gin', sql`${table.searchText} gin_trgm_ops`).with(searchIndexOptions),
    titleSearchIndex('changelog_entries_title_search_idx', table.title),
    index('changelog_entries_recency_idx').on(sql`(coalesce(${table.publishedAt}, ${table.updatedAt})) DESC`, table.id.desc().nullsFirst()),
  ],
);

export const roadmapItems = pgTable(
  'roadmap_items',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    slug: text('slug').notNull().unique(),
    title: text('title').notNull(),
    description: text('description'),
    summary: text('summary'),
    category: text('category'),
    status: text('status').notNull().default('planned'),
    priority: text('priority').notNull().default('medium'),
    /** critical 4 … low 1: the primary sort key of the public roadmap. */
    priorityRank: integer('priority_rank').generatedAlwaysAs(
      sql`CASE priority WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 ELSE 1 END`,
    ),
    quarter: text('quarter'),
    public: boolean('public').notNull().default(true),
    shippedAt: ts('shipped_at'),
    shipNote: text('ship_note'),
    changelogVersion: text('changelog_version'),
    votes: integer('votes').notNull().default(0),
    createdAt: created(),
    /** Unique per item (see platform/time.ts), so it can order and page the list. */
    updatedAt: updated(),
    searchText: searchText('title', 'summary', 'description'),
  },
  (table) => [
    check('roadmap_items_status_check', oneOf(table.status, ROADMAP_STATUSES)),
    check('roadmap_items_priority_check', oneOf(table.priority, ROADMAP_PRIORITIES)),
    check('roadmap_items_category_check', sql`${table.category} IS NULL OR ${oneOf(table.category, ROADMAP_CATEGORIES)}`),
    check('roadmap_items_votes_check', sql`${table.votes} >= 0`),
    // Not `votes`: a vote then changes no indexed column, so its UPDATE can be HOT (no new entries in these
    // indexes, above all none in the trigram index, which fastupdate=false makes costly). The priority order
    // reads this index and sorts each priority's items by votes in memory (incremental sort; 1,000 items).
    index('roadmap_items_order_idx').on(table.priorityRank.desc(), table.updatedAt.desc()),
    index('roadmap_items_search_idx').using('gin', sql`${table.searchText} gin_trgm_ops`).with(searchIndexOptions),
    titleSearchIndex('roadmap_items_title_search_idx', table.title),
    index('roadmap_items_recency_idx').on(table.updatedAt.desc().nullsFirst(), table.id.desc().nullsFirst()),
  ],
);

/** One row per voter per item: the primary key is what makes a vote idempotent under concurrency. */
export const roadmapVotes = pgTable(
  'roadmap_votes',
  {
    itemId: bigint('item_id', { mode: 'number' })
      .notNull()
      .references(() => roadmapItems.id, { onDelete: 'cascade' }),
    voterId: text('voter_id').notNull(),
    createdAt: created(),
  },
  (table) => [primaryKey({ columns: [table.itemId, table.voterId] })],
);

export const activity = pgTable(
  'activity',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    resource: text('resource').notNull(),
    resourceId: text('resource_id').notNull(),
    action: text('action').notNull(),
    actorId: text('actor_id').notNull(),
    actorType: text('actor_type').notNull(),
    summary: text('summary').notNull(),
    changes: jsonb('changes').$type<Changes>().notNull().default(sql`'{}'::jsonb`),
    /** Unique (see platform/time.ts): the sort key and cursor of the activity log. */
    createdAt: ts('created_at').notNull(),
  },
  (table) => [
    check('activity_actor_type_check', oneOf(table.actorType, ACTOR_TYPES)),
    check('activity_resource_check', oneOf(table.resource, ACTIVITY_RESOURCES)),
    check('activity_action_check', oneOf(table.action, ACTIVITY_ACTIONS)),
    index('activity_created_idx').on(table.createdAt),
    index('activity_resource_idx').on(table.resource, table.resourceId, table.createdAt),
  ],
);
