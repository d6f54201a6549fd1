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
import { queryRows, type Queryable } from './database.js';
import { textProblem } from './json-depth.js';
import { isIsoDate, toIso } from './time.js';

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
  /**
   * Also give the number of rows the list holds (`total`): `counted` counts them, which reads every one; an SQL
   * expression reads a count the database keeps (a trigger-maintained total), for lists too long to count.
   */
  total?: 'counted' | SQL;
}

type RowOf<Query extends PgSelect> = Query['_']['result'][number];

/** One page of a list ordered by a unique timestamp; with `total` also the size of the whole list. */
export async function keysetPage<Query extends PgSelect>(
  db: Queryable,
  list: KeysetList<Query> & { total: 'counted' | SQL },
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
    list.total === undefined
      ? undefined
      : list.total === 'counted'
        ? db.select({ total: count() }).from(list.from).where(list.where)
        : queryRows<{ total: number | string }>(db, sql`SELECT ${list.total} AS total`),
  ]);
  const result = takePage(rows as Array<RowOf<Query>>, page.limit, (last) => toIso(last[key]));
  return totals ? { ...result, total: Number(totals[0].total) } : result;
}

/**
 * Opaque cursors: a list with a compound order (a search's rank and time) hands out the last row's place as
 * base64url JSON. A cursor comes back from outside and may have been changed, so `decodeOpaqueCursor` gives its
 * parts only when each passes its check (`cursorParts`), and undefined otherwise: the caller refuses it as bad
 * input rather than letting an out-of-range value reach the database.
 */
export function encodeOpaqueCursor(parts: readonly unknown[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

export function decodeOpaqueCursor(text: string, checks: ReadonlyArray<(part: unknown) => boolean>): unknown[] | undefined {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || parts.length !== checks.length) return undefined;
  return parts.every((part, index) => checks[index](part)) ? parts : undefined;
}

/** Checks of cursor parts. */
export const cursorParts = {
  /** A string without NUL (any value the list wrote itself). */
  text: (part: unknown): part is string => typeof part === 'string' && textProblem(part) === undefined,
  /** An instant as `toIso` writes them, within what PostgreSQL stores. */
  instant: (part: unknown): part is string => typeof part === 'string' && part.length <= 40 && /T/.test(part) && isIsoDate(part),
  /**
   * A PostgreSQL `real` (such as a rank) as its text: a decimal number PostgreSQL reads back without overflow
   * or underflow (zero, or a magnitude within about 1.2e-38 to 3.4e38).
   */
  real: (part: unknown): part is string => {
    if (typeof part !== 'string' || !/^-?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d{1,3})?$/i.test(part)) return false;
    const magnitude = Math.abs(Number(part));
    return magnitude === 0 || (magnitude >= 1.2e-38 && magnitude <= 3.4e38);
  },
};
