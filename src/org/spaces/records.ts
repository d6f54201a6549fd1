/** Spaces: where work is placed (DESIGN 4.1). A person can place work only in spaces they belong to. */
import { and, asc, eq, notInArray, sql } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { newId } from '../ids.js';
import type { UpsertOutcome } from '../../platform/upsert.js';
import { spaceMembers, spaces } from '../schema.js';

export interface Space {
  id: string;
  key: string;
  name: string;
}

const spaceColumns = { id: spaces.id, key: spaces.key, name: spaces.name };

export async function listSpacesOfPerson(db: Queryable, personId: string): Promise<Space[]> {
  return db
    .select(spaceColumns)
    .from(spaces)
    .innerJoin(spaceMembers, eq(spaceMembers.spaceId, spaces.id))
    .where(eq(spaceMembers.personId, personId))
    .orderBy(asc(spaces.name), asc(spaces.key));
}

/** Every space, by name: what an owner or admin sees (an organization has a handful of spaces, not thousands). */
export async function listSpaces(db: Queryable): Promise<Space[]> {
  return db.select(spaceColumns).from(spaces).orderBy(asc(spaces.name), asc(spaces.key));
}

/** The ids of the person's spaces: what the tool registry checks `space_id` against. */
export async function listSpaceIdsOfPerson(db: Queryable, personId: string): Promise<string[]> {
  const rows = await db.select({ id: spaceMembers.spaceId }).from(spaceMembers).where(eq(spaceMembers.personId, personId));
  return rows.map((row) => row.id);
}

export async function upsertSpace(db: Queryable, input: { key: string; name: string }): Promise<{ space: Space; outcome: UpsertOutcome }> {
  const [existing] = await db.select({ id: spaces.id, name: spaces.name }).from(spaces).where(eq(spaces.key, input.key));
  if (existing) {
    if (existing.name === input.name) return { space: { id: existing.id, ...input }, outcome: 'unchanged' };
    await db.update(spaces).set({ name: input.name, updatedAt: sql`now()` }).where(eq(spaces.id, existing.id));
    return { space: { id: existing.id, ...input }, outcome: 'updated' };
  }
  const id = newId('spc');
  await db.insert(spaces).values({ id, ...input });
  return { space: { id, ...input }, outcome: 'created' };
}

/** Makes the members exactly `personIds`: the organization file is the declaration of who belongs. */
/** Returns whether anyone joined or left. */
export async function setSpaceMembers(db: Queryable, spaceId: string, personIds: string[]): Promise<boolean> {
  const stale = personIds.length
    ? and(eq(spaceMembers.spaceId, spaceId), notInArray(spaceMembers.personId, personIds))
    : eq(spaceMembers.spaceId, spaceId);
  const left = await db.delete(spaceMembers).where(stale).returning({ personId: spaceMembers.personId });
  if (!personIds.length) return left.length > 0;
  const joined = await db
    .insert(spaceMembers)
    .values(personIds.map((personId) => ({ spaceId, personId })))
    .onConflictDoNothing()
    .returning({ personId: spaceMembers.personId });
  return left.length > 0 || joined.length > 0;
}

export async function addSpaceMember(db: Queryable, spaceId: string, personId: string): Promise<void> {
  await db.insert(spaceMembers).values({ spaceId, personId }).onConflictDoNothing();
}

/** Every space, by name (the console's space filter for an owner or admin); at most `limit`. */
export async function listAllSpaces(db: Queryable, limit: number): Promise<Space[]> {
  return db.select(spaceColumns).from(spaces).orderBy(asc(spaces.name), asc(spaces.key)).limit(limit);
}
