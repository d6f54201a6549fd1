/**
 * The public roadmap (spec 2.8, 3.3; DESIGN section 3): items with a status, a priority and a vote count.
 *
 * - Status moves are free (any to any). Entering `shipped` records `shipped_at`; leaving it clears
 *   `shipped_at` and the ship note and changelog version, which describe that shipment.
 * - Non-public items exist only for authenticated readers (REST with the secret, MCP): public reads and
 *   votes answer 404 for them, exactly as for an item that does not exist.
 * - A shipped item cannot be deleted (spec 3.3, 7.2); deleting removes its votes (FK cascade).
 * - `updated_at` is written with `orderedNow()` on every write, so it is unique and serves as a sort key
 *   and cursor. Votes do not touch it: it says when the item itself last changed.
 */
import { and, asc, count, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import type { Tx } from '../platform/database.js';
import { takePage } from '../platform/paging.js';
import { orderedFloor, orderedNow, toIso } from '../platform/time.js';
import { diffChanges, recordActivity, type ActivityAction } from './activity.js';
import type { Actor } from './actor.js';
import type { ContentContext } from './context.js';
import {
  itemPriority,
  itemStatus,
  quarterSchema,
  ROADMAP_CATEGORIES,
  ROADMAP_PRIORITIES,
  ROADMAP_STATUSES,
  type CreateItemInput,
  type ListItemsQuery,
  type UpdateItemInput,
} from './contract.js';
import { contentErrors } from './errors.js';
import { isoDate, slugSchema, versionSchema } from './fields.js';
import { cachedRead } from './read-cache.js';
import { requestRevalidation } from './revalidation.js';
import { roadmapItems } from './schema.js';
import { insertUnderSlug } from './slugs.js';
import { writeContent, type Changed } from './write.js';

export type RoadmapStatus = (typeof ROADMAP_STATUSES)[number];
export type RoadmapCategory = (typeof ROADMAP_CATEGORIES)[number];
export type RoadmapPriority = (typeof ROADMAP_PRIORITIES)[number];

/** The item record of spec 2.8 as both interfaces return it. */
export const roadmapItem = z.object({
  slug: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  summary: z.string().nullable(),
  category: z.enum(ROADMAP_CATEGORIES).nullable(),
  status: z.enum(ROADMAP_STATUSES),
  priority: z.enum(ROADMAP_PRIORITIES),
  quarter: z.string().nullable(),
  public: z.boolean(),
  votes: z.number().int(),
  shipped_at: z.string().nullable(),
  ship_note: z.string().nullable(),
  changelog_version: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type RoadmapItem = z.infer<typeof roadmapItem>;

/** Reads that may see non-public items: REST with the secret, and every MCP tool. */
export interface Visibility {
  includeHidden?: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// Input schemas of the REST-only operations (spec 4.4); the others are the contract's (contract.ts).

export const shipItemInput = z
  .object({
    note: z.string().max(2_000).optional().describe('what shipped, shown with the item'),
    changelog_version: versionSchema.optional().describe('the release that shipped it, e.g. v1.4.0'),
  })
  .strict();
export type ShipItemInput = z.infer<typeof shipItemInput>;

const bulkItem = z
  .object({ slug: slugSchema, status: itemStatus.optional(), quarter: quarterSchema.nullable().optional(), priority: itemPriority.optional() })
  .strict()
  .refine((item) => item.status !== undefined || item.quarter !== undefined || item.priority !== undefined, {
    message: 'give at least one of status, quarter, priority',
  });

export const bulkUpdateInput = z
  .object({
    items: z
      .array(bulkItem)
      .min(1)
      .max(100)
      .refine((items) => new Set(items.map((item) => item.slug)).size === items.length, { message: 'each slug may appear only once' }),
  })
  .strict();
export type BulkUpdateInput = z.infer<typeof bulkUpdateInput>;

export type RoadmapSort = ListItemsQuery['sort'];

// ---------------------------------------------------------------------------------------------------------
// Records

const itemColumns = {
  id: roadmapItems.id,
  slug: roadmapItems.slug,
  title: roadmapItems.title,
  description: roadmapItems.description,
  summary: roadmapItems.summary,
  category: roadmapItems.category,
  status: roadmapItems.status,
  priority: roadmapItems.priority,
  priorityRank: roadmapItems.priorityRank,
  quarter: roadmapItems.quarter,
  public: roadmapItems.public,
  votes: roadmapItems.votes,
  shippedAt: roadmapItems.shippedAt,
  shipNote: roadmapItems.shipNote,
  changelogVersion: roadmapItems.changelogVersion,
  createdAt: roadmapItems.createdAt,
  updatedAt: roadmapItems.updatedAt,
};
type ItemRow = Omit<typeof roadmapItems.$inferSelect, 'searchText'>;

function toItem(row: ItemRow): RoadmapItem {
  return {
    slug: row.slug,
    title: row.title,
    description: row.description,
    summary: row.summary,
    category: row.category as RoadmapCategory | null,
    status: row.status as RoadmapStatus,
    priority: row.priority as RoadmapPriority,
    quarter: row.quarter,
    public: row.public,
    votes: row.votes,
    shipped_at: toIso(row.shippedAt),
    ship_note: row.shipNote,
    changelog_version: row.changelogVersion,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

/** The fields whose changes the activity log records. */
const TRACKED_FIELDS = [
  'title',
  'description',
  'summary',
  'category',
  'status',
  'priority',
  'quarter',
  'public',
  'shipped_at',
  'ship_note',
  'changelog_version',
] as const satisfies ReadonlyArray<keyof RoadmapItem>;

// ---------------------------------------------------------------------------------------------------------
// Reads

export async function getItem(ctx: ContentContext, slug: string, visibility: Visibility = {}): Promise<RoadmapItem> {
  const includeHidden = visibility.includeHidden ?? false;
  return cachedRead(ctx, 'roadmap', 'item', { slug, include_hidden: includeHidden }, async () => {
    const [row] = await ctx.db
      .select(itemColumns)
      .from(roadmapItems)
      .where(and(eq(roadmapItems.slug, slug), includeHidden ? undefined : eq(roadmapItems.public, true)))
      .limit(1);
    if (!row) throw notFound(slug);
    return toItem(row);
  });
}

export type StatusCounts = Record<RoadmapStatus, number>;

export const itemPage = z.object({
  items: z.array(roadmapItem),
  next_cursor: z.string().nullable(),
  total: z.number().int().describe('items matching every filter, across all pages'),
  by_status: z
    .object(Object.fromEntries(ROADMAP_STATUSES.map((name) => [name, z.number().int()])) as Record<RoadmapStatus, z.ZodNumber>)
    .describe('items per status matching the other filters (category, quarter, visibility), whatever status says'),
});
export type ItemPage = z.infer<typeof itemPage>;

/**
 * One page of the roadmap. Public reads see public items only.
 *
 * Paging is keyset paging over a total order, so no item is skipped or repeated: every sort ends with
 * the unique `updated_at`. Spec 8 says cursors are ISO dates; that holds for `sort=updated_at`, where the
 * cursor is the exact `updated_at` of the last item. A date cannot mark a place in the priority or vote
 * order, so for those sorts `next_cursor` is an opaque token carrying the last item's sort key (see
 * `encodeCursor`). Carrying the values rather than naming the item keeps paging stable when that item
 * gains votes, is edited or is deleted between two pages.
 */
export async function listItems(ctx: ContentContext, query: ListItemsQuery, visibility: Visibility = {}): Promise<ItemPage> {
  const includeHidden = visibility.includeHidden ?? false;
  return cachedRead(ctx, 'roadmap', 'list', { ...query, include_hidden: includeHidden }, () => readItems(ctx, query, visibility));
}

async function readItems(ctx: ContentContext, query: ListItemsQuery, visibility: Visibility): Promise<ItemPage> {
  const position = query.cursor === undefined ? undefined : decodeCursor(query.sort, query.cursor);
  const scope = and(
    visibility.includeHidden ? undefined : eq(roadmapItems.public, true),
    query.category ? eq(roadmapItems.category, query.category) : undefined,
    query.quarter ? eq(roadmapItems.quarter, query.quarter) : undefined,
  );
  const filtered = and(scope, query.status === 'all' ? undefined : eq(roadmapItems.status, query.status));

  const [rows, counts] = await Promise.all([
    ctx.db
      .select(itemColumns)
      .from(roadmapItems)
      .where(and(filtered, position ? after(position) : undefined))
      .orderBy(...ORDER[query.sort])
      .limit(query.limit + 1),
    ctx.db.select({ status: roadmapItems.status, n: count() }).from(roadmapItems).where(scope).groupBy(roadmapItems.status),
  ]);

  const by_status = Object.fromEntries(ROADMAP_STATUSES.map((name) => [name, 0])) as StatusCounts;
  for (const { status: name, n } of counts) by_status[name as RoadmapStatus] = Number(n);
  const total = query.status === 'all' ? Object.values(by_status).reduce((sum, n) => sum + n, 0) : by_status[query.status];

  const page = takePage(rows, query.limit, (last) => encodeCursor(query.sort, last));
  return { items: page.rows.map(toItem), next_cursor: page.next_cursor, total, by_status };
}

/**
 * Every order is descending and ends with the unique `updated_at` (DESIGN 3: priority, then votes, then
 * recency). NULLS LAST (no column here is ever null) matches roadmap_items_order_idx as drizzle writes it, so
 * the default order reads priorities from the index and sorts only within them by votes (an incremental sort;
 * votes stay out of the index so that a vote's UPDATE is HOT, see schema.ts).
 */
const descending = (column: SQL | AnyPgColumn) => sql`${column} desc nulls last`;
const ORDER: Record<RoadmapSort, SQL[]> = {
  priority: [descending(roadmapItems.priorityRank), descending(roadmapItems.votes), descending(roadmapItems.updatedAt)],
  votes: [descending(roadmapItems.votes), descending(roadmapItems.updatedAt)],
  updated_at: [descending(roadmapItems.updatedAt)],
};

/** The sort key of the last item of a page. */
interface Position {
  rank?: number;
  votes?: number;
  updatedAt: string;
}

/** Rows strictly after `position` in the (all descending) order: a row comparison on the sort key. */
function after(position: Position): SQL {
  const updatedAt = sql`${position.updatedAt}::timestamptz`;
  if (position.rank !== undefined && position.votes !== undefined) {
    return sql`(${roadmapItems.priorityRank}, ${roadmapItems.votes}, ${roadmapItems.updatedAt}) < (${position.rank}::int, ${position.votes}::int, ${updatedAt})`;
  }
  if (position.votes !== undefined) {
    return sql`(${roadmapItems.votes}, ${roadmapItems.updatedAt}) < (${position.votes}::int, ${updatedAt})`;
  }
  return sql`${roadmapItems.updatedAt} < ${updatedAt}`;
}

/**
 * `sort=updated_at`: the ISO `updated_at` of the last item (spec 8). Other sorts: base64url of
 * `["priority", rank, votes, updated_at]` or `["votes", votes, updated_at]`; clients pass it back as is.
 */
function encodeCursor(sort: RoadmapSort, row: ItemRow): string {
  const updatedAt = toIso(row.updatedAt);
  if (sort === 'updated_at') return updatedAt;
  const key = sort === 'priority' ? [sort, Number(row.priorityRank), row.votes, updatedAt] : [sort, row.votes, updatedAt];
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

const tokenSchema = z.union([
  z.tuple([z.literal('priority'), z.number().int().min(1).max(4), z.number().int().min(0), isoDate]),
  z.tuple([z.literal('votes'), z.number().int().min(0), isoDate]),
]);

function decodeCursor(sort: RoadmapSort, cursor: string): Position {
  const invalid = () =>
    contentErrors.invalidRequest(`cursor is not a next_cursor of a list sorted by ${sort}`, { field: 'cursor' });
  if (sort === 'updated_at') {
    if (!isoDate.safeParse(cursor).success) throw invalid();
    return { updatedAt: cursor };
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const parsed = tokenSchema.safeParse(decoded);
  if (!parsed.success || parsed.data[0] !== sort) throw invalid();
  const key = parsed.data;
  return key[0] === 'priority' ? { rank: key[1], votes: key[2], updatedAt: key[3] } : { votes: key[1], updatedAt: key[2] };
}

// ---------------------------------------------------------------------------------------------------------
// Writes

/** Slugs that name fixed routes (`GET /roadmap/all`, `POST /roadmap/bulk`), so no item may take them. */
const RESERVED_SLUGS = new Set(['all', 'bulk']);

export async function createItem(ctx: ContentContext, input: CreateItemInput, actor: Actor): Promise<RoadmapItem> {
  const item = await writeContent(ctx, 'roadmap', async (tx, changed) => {
    const row = await insertUnderSlug({
      given: input.slug,
      title: input.title,
      reserved: RESERVED_SLUGS,
      isTaken: (candidate) => slugTaken(tx, candidate),
      insert: (slug) =>
        tx
          .insert(roadmapItems)
          .values({
            slug,
            title: input.title,
            description: input.description,
            summary: input.summary,
            category: input.category,
            status: input.status ?? 'planned',
            priority: input.priority ?? 'medium',
            quarter: input.quarter,
            public: input.public ?? true,
            shippedAt: input.status === 'shipped' ? sql`now()` : null,
            createdAt: orderedFloor(),
            updatedAt: orderedNow(),
          })
          .onConflictDoNothing({ target: roadmapItems.slug })
          .returning(itemColumns)
          .then((rows) => rows[0]),
    });
    const created = toItem(row);
    changed(created.slug);
    await recordActivity(tx, actor, {
      resource: 'roadmap',
      resourceId: created.slug,
      action: 'created',
      summary: `created roadmap item '${created.title}'`,
    });
    if (created.public) await requestRevalidation(ctx, tx, { type: 'roadmap', slug: created.slug });
    return created;
  });
  ctx.jobs.wake();
  return item;
}

async function slugTaken(tx: Tx, slug: string): Promise<boolean> {
  if (RESERVED_SLUGS.has(slug)) return true;
  const [row] = await tx.select({ id: roadmapItems.id }).from(roadmapItems).where(eq(roadmapItems.slug, slug)).limit(1);
  return row !== undefined;
}

export async function updateItem(ctx: ContentContext, slug: string, input: UpdateItemInput, actor: Actor): Promise<RoadmapItem> {
  if (Object.values(input).every((value) => value === undefined)) {
    throw contentErrors.invalidRequest('nothing to update: give any of title, description, summary, category, status, priority, quarter, public');
  }
  const item = await writeContent(ctx, 'roadmap', async (tx, changed) => {
    const before = await lockItem(tx, slug);
    const action = input.status !== undefined && input.status !== before.status ? 'status_changed' : 'updated';
    return applyChange(ctx, tx, changed, actor, before, input, action);
  });
  ctx.jobs.wake();
  return toItem(item);
}

/** Spec 3.3: any status to shipped, recording `shipped_at`; shipping a shipped item keeps its date and may amend the note. */
export async function shipItem(ctx: ContentContext, slug: string, input: ShipItemInput, actor: Actor): Promise<RoadmapItem> {
  const item = await writeContent(ctx, 'roadmap', async (tx, changed) => {
    const before = await lockItem(tx, slug);
    const change = { status: 'shipped' as const, ship_note: input.note, changelog_version: input.changelog_version };
    if (before.status === 'shipped') return applyChange(ctx, tx, changed, actor, before, change, 'updated');
    return applyChange(ctx, tx, changed, actor, before, change, 'status_changed', `shipped roadmap item '${before.title}'`);
  });
  ctx.jobs.wake();
  return toItem(item);
}

/**
 * Spec 4.4 bulk update: all or nothing in one transaction. Every slug is checked before anything is
 * written, so an unknown one answers 404 and changes nothing. The log gets one `bulk_updated` entry per
 * item that changed (resource_id = its slug), so filtering the log by an item shows its bulk changes too;
 * an item already holding the given values is left as it is, like any update that changes nothing.
 */
export async function bulkUpdateItems(ctx: ContentContext, input: BulkUpdateInput, actor: Actor): Promise<{ items: RoadmapItem[] }> {
  const items = await writeContent(ctx, 'roadmap', async (tx, changed) => {
    const slugs = input.items.map((item) => item.slug);
    // Locked in id order, so two overlapping bulk updates wait for each other instead of deadlocking.
    const rows = await tx
      .select(itemColumns)
      .from(roadmapItems)
      .where(inArray(roadmapItems.slug, slugs))
      .orderBy(asc(roadmapItems.id))
      .for('update');
    const bySlug = new Map(rows.map((row) => [row.slug, row]));
    const missing = slugs.find((slug) => !bySlug.has(slug));
    if (missing) throw notFound(missing);

    const updated: RoadmapItem[] = [];
    for (const { slug, ...change } of input.items) {
      const summaryText = `bulk update of ${input.items.length} roadmap items: '${bySlug.get(slug)!.title}'`;
      updated.push(toItem(await applyChange(ctx, tx, changed, actor, bySlug.get(slug)!, change, 'bulk_updated', summaryText)));
    }
    return updated;
  });
  ctx.jobs.wake();
  return { items };
}

/** Spec 3.3 and 4.3 delete_roadmap_item: a shipped item is refused; the votes go with the item (FK cascade). */
export async function deleteItem(ctx: ContentContext, slug: string, actor: Actor): Promise<{ slug: string; deleted: true }> {
  await writeContent(ctx, 'roadmap', async (tx, changed) => {
    const before = await lockItem(tx, slug);
    if (before.status === 'shipped') {
      throw contentErrors.invalidState(`roadmap item '${slug}' is shipped; a shipped item cannot be deleted`, before.status);
    }
    changed(slug);
    await tx.delete(roadmapItems).where(eq(roadmapItems.id, before.id));
    await recordActivity(tx, actor, {
      resource: 'roadmap',
      resourceId: slug,
      action: 'deleted',
      summary: `deleted roadmap item '${before.title}'`,
    });
    if (before.public) await requestRevalidation(ctx, tx, { type: 'roadmap', slug });
  });
  ctx.jobs.wake();
  return { slug, deleted: true };
}

async function lockItem(tx: Tx, slug: string): Promise<ItemRow> {
  const [row] = await tx.select(itemColumns).from(roadmapItems).where(eq(roadmapItems.slug, slug)).for('update');
  if (!row) throw notFound(slug);
  return row;
}

/** What an update, a ship or a bulk entry may set; `undefined` leaves a field as it is. */
interface Change extends UpdateItemInput {
  ship_note?: string;
  changelog_version?: string;
}

/**
 * Applies a change to a locked row with the status rule of DESIGN 3, records it, and, when the public
 * roadmap shows the item before or after, asks the site to rebuild its pages (an item turned non-public
 * must disappear from them too). A change that would alter nothing writes nothing and logs nothing.
 */
async function applyChange(
  ctx: ContentContext,
  tx: Tx,
  changed: Changed,
  actor: Actor,
  before: ItemRow,
  change: Change,
  action: ActivityAction,
  summaryText?: string,
): Promise<ItemRow> {
  const current = toItem(before);
  const alters = Object.entries(change).some(([field, value]) => value !== undefined && value !== current[field as keyof RoadmapItem]);
  if (!alters) return before;
  changed(before.slug);

  const entering = change.status === 'shipped' && before.status !== 'shipped';
  const leaving = change.status !== undefined && change.status !== 'shipped' && before.status === 'shipped';
  const [after] = await tx
    .update(roadmapItems)
    .set({
      title: change.title,
      description: change.description,
      summary: change.summary,
      category: change.category,
      status: change.status,
      priority: change.priority,
      quarter: change.quarter,
      public: change.public,
      shipNote: leaving ? null : change.ship_note,
      changelogVersion: leaving ? null : change.changelog_version,
      shippedAt: entering ? sql`now()` : leaving ? null : undefined,
      updatedAt: orderedNow(),
    })
    .where(eq(roadmapItems.id, before.id))
    .returning(itemColumns);

  const changes = diffChanges(current, toItem(after), TRACKED_FIELDS);
  await recordActivity(tx, actor, {
    resource: 'roadmap',
    resourceId: after.slug,
    action,
    summary: summaryText ?? `updated ${Object.keys(changes).join(', ')} of roadmap item '${after.title}'`,
    changes,
  });
  if (before.public || after.public) await requestRevalidation(ctx, tx, { type: 'roadmap', slug: after.slug });
  return after;
}

function notFound(slug: string) {
  return contentErrors.notFound('roadmap item', slug);
}
