/**
 * Timestamps as the API shows them, and timestamps that can serve as cursors.
 *
 * Cursors are ISO date strings (spec section 8), yet no item may be skipped or repeated while paging even
 * when items are written in the same millisecond (DESIGN section 3). So list timestamps are made unique at
 * write time: the millisecond comes from the clock and the three sub-millisecond digits from a shared
 * sequence. Two rows can only collide after a thousand writes in one millisecond. A cursor is then the
 * exact microsecond ISO timestamp of the last row returned. Rows written within one millisecond keep a
 * stable order among themselves, but not necessarily the order they were written in (the digits wrap).
 */
import { sql, type SQL } from 'drizzle-orm';

export function orderedNow(): SQL {
  return sql`date_trunc('milliseconds', now()) + (nextval('atrium_tick') % 1000) * interval '1 microsecond'`;
}

/** PostgreSQL's text form of a timestamptz in UTC (`2026-01-02 03:04:05.123456+00`) as ISO 8601 with µs. */
export function toIso(value: string): string;
export function toIso(value: string | null): string | null;
export function toIso(value: string | null): string | null {
  if (value === null) return null;
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?(?:\+00(?::?00)?|Z)$/.exec(value);
  if (!match) return new Date(value).toISOString();
  return `${match[1]}T${match[2]}.${(match[3] ?? '').padEnd(6, '0')}Z`;
}

/** A cursor or date filter as given by a client: any ISO 8601 date or date-time. */
export const isoDatePattern = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * An ISO 8601 date or date-time (`isoDatePattern`) that names a real calendar day and time of day: the
 * pattern alone lets `2026-02-30` through, which PostgreSQL then refuses with an error instead of a 400.
 */
export function isIsoDate(value: string): boolean {
  if (!isoDatePattern.test(value)) return false;
  const [year, month, day, hour = 0, minute = 0, second = 0] = (value.match(/\d+/g) ?? []).slice(0, 6).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
}
