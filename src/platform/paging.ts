/**
 * Keyset paging (spec section 8: `limit` and `cursor`, answered with `next_cursor`), written once.
 *
 * A page is read with `limit + 1` rows: the extra row only says that another page follows. The cursor names
 * a place in the order, never an offset, so rows written or deleted between two pages neither shift nor
 * repeat what the client sees. Lists ordered by one unique `orderedNow()` timestamp (platform/time.ts) use
 * `keysetPage`; a list with a compound order (the roadmap's priority, votes, recency) builds its own query
 * and cuts it with `takePage`.
 */
import { and, asc, count, gt, lt, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgSelect, PgTable } from 'drizzle-orm/pg-core';
import type { Queryable } from './database.js';
import { toIso } from './time.js';

export interface PageRequest {
  limit: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

export interface Page<Row> {
  rows: Row[];
  next_cursor: string | null;
}

/** The first `limit` of `rows` (read with `limit + 1`), and the cursor of the last one when more follow. */
export function takePage<Row>(rows: Row[], limit: number, cursorOf: (last: Row) => string | null): Page<Row> {
  const page = rows.slice(0, limit);
  return { rows: page, next_cursor: rows.length > limit ? cursorOf(page[page.length - 1]) : null };
}

export interface KeysetList<Query extends PgSelect> {
  /** `db.select(columns).from(table).$dynamic()`: the rows and columns read, before any filter. */
  select: Query;
  /** The table selected from, to count the list's rows. */
  from: PgTable;
  /** Which rows the list holds (undefined: all). */
  where?: SQL;
  /** A unique timestamp column of the selection (written with `orderedNow()`): the cursor is its exact value. */
  order: {
    key: keyof RowOf<Query> & string;
    column: PgColumn;
    direction: 'newest_first' | 'oldest_first';
    /**
     * Where NULLs sort, as the index serving the list stores them: an ORDER BY that differs from the index in
     * this (a plain DESC means NULLS FIRST) cannot read the index and sorts the whole table instead.
     */
    nulls?: 'first' | 'last';
  };
  /** Also count every row the list holds (`total`). */
  total?: 'counted';
}

type RowOf<Query extends PgSelect> = Query['_']['result'][number];

/** One page of a list ordered by a unique timestamp; with `total: 'counted'` also the size of the whole list. */
export async function keysetPage<Query extends PgSelect>(
  db: Queryable,
  list: KeysetList<Query> & { total: 'counted' },
  page: PageRequest,
): Promise<Page<RowOf<Query>> & { total: number }>;
export async function keysetPage<Query extends PgSelect>(db: Queryable, list: KeysetList<Query>, page: PageRequest): Promise<Page<RowOf<Query>>>;
export async function keysetPage<Query extends PgSelect>(
  db: Queryable,
  list: KeysetList<Query>,
  page: PageRequest,
): Promise<Page<RowOf<Query>> & { total?: number }> {
  const { key, column, direction, nulls } = list.order;
  const newestFirst = direction === 'newest_first';
  const past = page.cursor === undefined ? undefined : newestFirst ? lt(column, page.cursor) : gt(column, page.cursor);
  const orderBy = newestFirst ? sql`${column} desc nulls ${sql.raw(nulls ?? 'first')}` : nulls === 'first' ? sql`${column} asc nulls first` : asc(column);
  const [rows, totals] = await Promise.all([
    list.select.where(and(list.where, past)).orderBy(orderBy).limit(page.limit + 1),
    list.total === 'counted' ? db.select({ total: count() }).from(list.from).where(list.where) : undefined,
  ]);
  const result = takePage(rows as Array<RowOf<Query>>, page.limit, (last) => toIso(last[key]));
  return totals ? { ...result, total: Number(totals[0].total) } : result;
}
