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
  return sql`${orderedFloor()} + (nextval('atrium_tick') % 1000) * interval '1 microsecond'`;
}

/**
 * Where this transaction's `orderedNow()` values start: the millisecond before the current one, so that they
 * are never later than now() (a row's updated_at, now() at a later write, never precedes a created_at written
 * with orderedNow()), and a created_at written with this floor never follows an updated_at written with
 * orderedNow() in the same statement.
 */
export function orderedFloor(): SQL {
  return sql`date_trunc('milliseconds', now()) - interval '1 millisecond'`;
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
 * An ISO 8601 date or date-time (`isoDatePattern`) that names a real calendar day and time of day, and that
 * PostgreSQL can store and this service can show again: the pattern alone lets `2026-02-30` through, which
 * PostgreSQL then refuses with an error instead of a 400. See `dateProblem`.
 */
export function isIsoDate(value: string): boolean {
  return isoDatePattern.test(value) && dateProblem(value) === undefined;
}

/** The earliest and latest instants kept: years 0001 to 9999 in UTC, which `toIso` writes in four digits. */
const FIRST_INSTANT = -62_135_596_800_000; // 0001-01-01T00:00:00Z
const LAST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Why an ISO 8601 date or date-time (with or without an offset) is no instant PostgreSQL stores and this
 * service reads back; undefined when it is one. Refused: a day or time that does not exist (`2026-02-30`,
 * `24:00`), year 0000, an offset beyond ±15:59 (PostgreSQL's limit), and an instant outside the years 0001 to
 * 9999 in UTC (`0001-01-01T00:00:00+01:00` is in year 0; PostgreSQL would write it as `… BC`).
 */
export function dateProblem(value: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):?(\d{2}))?)?$/i.exec(value);
  if (!match) return 'not an ISO 8601 date or date-time';
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0));
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second);
  const real = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
  if (!real) return 'not a real date and time';
  if (year < 1) return 'years start at 0001';
  const [sign, offsetHours, offsetMinutes] = [match[9], Number(match[10] ?? 0), Number(match[11] ?? 0)];
  if (offsetHours > 15 || offsetMinutes > 59) return 'an offset from UTC is at most ±15:59';
  const instant = date.getTime() - (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  if (instant < FIRST_INSTANT || instant > LAST_INSTANT) return 'must fall within the years 0001 to 9999 in UTC';
  return undefined;
}

/** A timestamp for people: `2026-03-04 10:30:00 UTC`, or a dash when there is none (pages and emails write it alike). */
export function formatTime(value: string | null | undefined): string {
  if (!value) return '—';
  return new Date(value).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}
