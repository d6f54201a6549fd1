/**
 * Whose records a person may read in the console (DESIGN 4.6): owners and admins everything; anyone else the
 * records of the spaces they belong to and what was done by them or on their behalf, never another space's.
 * The concepts' reads take this and turn it into their own WHERE clause with `scopeCondition`.
 */
import { eq, inArray, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';

export interface ReadScope {
  all: boolean;
  personId: string;
  spaceIds: readonly string[];
}

/** The condition a record with these columns meets when it is the scope's; undefined for everything. */
export function scopeCondition(scope: ReadScope, columns: { space: AnyColumn; person?: AnyColumn }): SQL | undefined {
  if (scope.all) return undefined;
  const inSpaces = scope.spaceIds.length > 0 ? inArray(columns.space, [...scope.spaceIds]) : undefined;
  const own = columns.person ? eq(columns.person, scope.personId) : undefined;
  // A person in no space, reading records that are nobody's own: nothing.
  return or(own, inSpaces) ?? sql`false`;
}
