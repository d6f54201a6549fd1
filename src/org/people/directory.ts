/**
 * Who is in which space, with what role (DESIGN 4.1, 4.6 "people and spaces"). A reader sees the spaces they may
 * see — every space for an owner or admin, their own for anyone else — and the people of those spaces; an owner
 * or admin also sees people in no space. No password hash is ever read here.
 *
 * Both lists are ordered by name, then id (names repeat), and paged with an opaque cursor of that pair.
 */
import { and, asc, eq, gt, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Queryable } from '../../platform/database.js';
import { cursorParts, decodeOpaqueCursor, encodeOpaqueCursor, takePage, type Page } from '../../platform/paging.js';
import { orgErrors } from '../errors.js';
import { people, spaceMembers, spaces } from '../schema.js';
import type { Role } from './records.js';

/** The spaces a reader may see: all of them, or these. */
export type VisibleSpaces = 'all' | readonly string[];

export interface DirectoryPerson {
  id: string;
  name: string;
  email: string;
  role: Role;
  /** `file`: declared in the organization file, changed only there. */
  managed_by: 'file' | 'console';
  /** The person's spaces that the reader may see. */
  space_ids: string[];
}

export interface DirectorySpace {
  id: string;
  key: string;
  name: string;
  managed_by: 'file' | 'console';
  members: number;
}

interface ListRequest {
  limit: number;
  cursor?: string;
}

/** Active people of the visible spaces (of `spaceId` only, when given: one of them), by name; removed people are gone from it. */
export async function listPeople(db: Queryable, visible: VisibleSpaces, request: ListRequest & { spaceId?: string }): Promise<Page<DirectoryPerson>> {
  if (request.spaceId !== undefined && visible !== 'all' && !visible.includes(request.spaceId)) throw orgErrors.notFound('space');
  const inSpaces = request.spaceId !== undefined ? [request.spaceId] : visible === 'all' ? undefined : [...visible];
  if (inSpaces?.length === 0) return { rows: [], next_cursor: null };
  const member = inSpaces
    ? sql`EXISTS (SELECT 1 FROM ${spaceMembers} WHERE ${spaceMembers.personId} = ${people.id} AND ${inArray(spaceMembers.spaceId, inSpaces)})`
    : undefined;
  const rows = await db
    .select({ id: people.id, name: people.name, email: people.email, role: people.role, managed_by: people.managedBy })
    .from(people)
    .where(and(eq(people.status, 'active'), member, after(people.name, people.id, request.cursor)))
    .orderBy(asc(people.name), asc(people.id))
    .limit(request.limit + 1);
  const page = takePage(rows, request.limit, nameCursor);
  if (page.rows.length === 0) return { rows: [], next_cursor: page.next_cursor };
  const memberships = await db
    .select({ personId: spaceMembers.personId, spaceId: spaceMembers.spaceId })
    .from(spaceMembers)
    .where(
      and(
        inArray(
          spaceMembers.personId,
          page.rows.map((row) => row.id),
        ),
        visible === 'all' ? undefined : inArray(spaceMembers.spaceId, [...visible]),
      ),
    );
  return {
    rows: page.rows.map((row) => ({ ...row, space_ids: memberships.filter((entry) => entry.personId === row.id).map((entry) => entry.spaceId) })),
    next_cursor: page.next_cursor,
  };
}

/** The visible spaces by name, with how many people belong to each. */
export async function listSpacesWithMembers(db: Queryable, visible: VisibleSpaces, request: ListRequest): Promise<Page<DirectorySpace>> {
  if (visible !== 'all' && visible.length === 0) return { rows: [], next_cursor: null };
  const rows = await db
    .select({
      id: spaces.id,
      key: spaces.key,
      name: spaces.name,
      managed_by: spaces.managedBy,
      members: sql<number>`(SELECT count(*)::int FROM ${spaceMembers} WHERE ${spaceMembers.spaceId} = ${spaces.id})`,
    })
    .from(spaces)
    .where(and(visible === 'all' ? undefined : inArray(spaces.id, [...visible]), after(spaces.name, spaces.id, request.cursor)))
    .orderBy(asc(spaces.name), asc(spaces.id))
    .limit(request.limit + 1);
  return takePage(rows, request.limit, nameCursor);
}

/** The names of these people (provenance and authorship shown by name); an unknown id is left out. */
export async function namesOfPeople(db: Queryable, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.select({ id: people.id, name: people.name }).from(people).where(inArray(people.id, unique));
  return new Map(rows.map((row) => [row.id, row.name]));
}

function nameCursor(last: { name: string; id: string }): string {
  return encodeOpaqueCursor([last.name, last.id]);
}

/** Rows after the cursor's (name, id); a cursor this service did not hand out is refused. */
function after(name: AnyPgColumn, id: AnyPgColumn, cursor: string | undefined): SQL | undefined {
  if (cursor === undefined) return undefined;
  const parts = decodeOpaqueCursor(cursor, [cursorParts.text, cursorParts.text]);
  if (!parts) throw orgErrors.invalidArgument('cursor', 'not a cursor this service returned');
  const [lastName, lastId] = parts as [string, string];
  return or(gt(name, lastName), and(eq(name, lastName), gt(id, lastId)));
}
