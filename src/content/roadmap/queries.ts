/**
 * Reads of the roadmap (spec 4.3, 4.4; DESIGN 3): one item, and a page of items in priority, vote or
 * recency order with the count per status. Public reads see public items only.
 */
import { and, count, eq, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { decodeOpaqueCursor, encodeOpaqueCursor, takePage } from '../../platform/paging.js';
import { toIso } from '../../platform/time.js';
import type { ContentContext } from '../context.js';
import { ROADMAP_STATUSES, type ListItemsQuery } from '../contract.js';
import { contentErrors } from '../errors.js';
import { isoDate } from '../fields.js';
import { cachedRead } from '../read-cache.js';
import { roadmapItems } from '../schema.js';
import { itemColumns, notFound, roadmapItem, toItem, type ItemRow, type RoadmapItem, type RoadmapStatus, type Visibility } from './records.js';

export type RoadmapSort = ListItemsQuery['sort'];

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
 * `sort=updated_at`: the ISO `updated_at` of the last item (spec 8). Other sorts: an opaque cursor
 * (platform/paging.ts) of `["priority", rank, votes, updated_at]` or `["votes", votes, updated_at]`; clients
 * pass it back as is.
 */
function encodeCursor(sort: RoadmapSort, row: ItemRow): string {
  const updatedAt = toIso(row.updatedAt);
  if (sort === 'updated_at') return updatedAt;
  return encodeOpaqueCursor(sort === 'priority' ? [sort, Number(row.priorityRank), row.votes, updatedAt] : [sort, row.votes, updatedAt]);
}

const integerIn = (min: number, max = Number.MAX_SAFE_INTEGER) => (part: unknown) =>
  Number.isSafeInteger(part) && (part as number) >= min && (part as number) <= max;
const date = (part: unknown) => typeof part === 'string' && isoDate.safeParse(part).success;
/** The parts of each sort's cursor, each with its check. */
const CURSOR_PARTS = {
  priority: [(part: unknown) => part === 'priority', integerIn(1, 4), integerIn(0), date],
  votes: [(part: unknown) => part === 'votes', integerIn(0), date],
};

function decodeCursor(sort: RoadmapSort, cursor: string): Position {
  const invalid = () =>
    contentErrors.invalidRequest(`cursor is not a next_cursor of a list sorted by ${sort}`, { field: 'cursor' });
  if (sort === 'updated_at') {
    if (!isoDate.safeParse(cursor).success) throw invalid();
    return { updatedAt: cursor };
  }
  const key = decodeOpaqueCursor(cursor, CURSOR_PARTS[sort]);
  if (!key) throw invalid();
  return sort === 'priority'
    ? { rank: key[1] as number, votes: key[2] as number, updatedAt: key[3] as string }
    : { votes: key[1] as number, updatedAt: key[2] as string };
}
