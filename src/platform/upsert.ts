/**
 * What an upsert did: `INSERT … ON CONFLICT DO UPDATE … WHERE <the row differs>` updates (and bumps
 * `updated_at`) only when a column really changes, so applying the same declaration twice reports
 * "unchanged" and leaves the row as it was.
 */
import { getTableName, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';

export type UpsertOutcome = 'created' | 'updated' | 'unchanged';

/** The ON CONFLICT … WHERE condition: any of `columns` differs between the stored and the proposed row. */
export function differsFromExcluded(table: PgTable, columns: PgColumn[]): SQL {
  const list = (row: string) => sql.raw(columns.map((column) => `${row}."${column.name}"`).join(', '));
  return sql`ROW(${list(`"${getTableName(table)}"`)}) IS DISTINCT FROM ROW(${list('excluded')})`;
}

/** The outcome from `RETURNING (xmax = 0) AS created`: no row back means the WHERE found nothing to change. */
export function upsertOutcome(row: { created: boolean } | undefined): UpsertOutcome {
  return !row ? 'unchanged' : row.created ? 'created' : 'updated';
}
