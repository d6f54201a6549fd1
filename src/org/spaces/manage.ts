/**
 * Owners and admins shape the spaces from the console (DESIGN 4.6, issue 20 item 1): create one, rename it, add
 * and remove members (active people only). A space the organization file declares is changed only in the file,
 * its members too (applying the file makes them exactly the file's list).
 *
 * Every change is recorded in the activity log in its own transaction, with the person who made it.
 */
import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { inTransaction, type Queryable, type Tx } from '../../platform/database.js';
import { recordActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import { id, text } from '../fields.js';
import { newId } from '../ids.js';
import { key } from '../org-file/schema.js';
import { assertManager } from '../people/manage.js';
import type { Person } from '../people/records.js';
import { people, spaceMembers, spaces } from '../schema.js';

const spaceName = text().trim().min(1, 'must not be empty').max(200);

export const createSpaceInput = z.object({ key, name: spaceName });
export const renameSpaceInput = z.object({ space_id: id(), name: spaceName });
export const spaceMemberInput = z.object({ space_id: id(), person_id: id() });

export async function createSpace(db: Queryable, actor: Person, input: z.infer<typeof createSpaceInput>): Promise<string> {
  assertManager(actor);
  return inTransaction(db, async (tx) => {
    const spaceId = newId('spc');
    const [made] = await tx.insert(spaces).values({ id: spaceId, key: input.key, name: input.name }).onConflictDoNothing().returning({ id: spaces.id });
    if (!made) throw orgErrors.invalidArgument('key', `a space with the key ${input.key} already exists`);
    await recordActivity(tx, { kind: 'space.created', summary: `created the space ${input.name} (${input.key})`, personId: actor.id, spaceId, subject: spaceId });
    return spaceId;
  });
}

/** The space an owner or admin is about to change, locked until the change commits; a file's space is refused. */
async function lockSpace(tx: Tx, spaceId: string): Promise<{ id: string; name: string }> {
  const [space] = await tx.select({ id: spaces.id, name: spaces.name, managedBy: spaces.managedBy }).from(spaces).where(eq(spaces.id, spaceId)).for('update');
  if (!space) throw orgErrors.notFound('space');
  if (space.managedBy === 'file') throw orgErrors.managedByFile(`The space ${space.name}`);
  return space;
}

export async function renameSpace(db: Queryable, actor: Person, input: z.infer<typeof renameSpaceInput>): Promise<void> {
  assertManager(actor);
  await inTransaction(db, async (tx) => {
    const space = await lockSpace(tx, input.space_id);
    if (space.name === input.name) return;
    await tx.update(spaces).set({ name: input.name, updatedAt: sql`now()` }).where(eq(spaces.id, space.id));
    await recordActivity(tx, {
      kind: 'space.renamed',
      summary: `renamed the space ${space.name} to ${input.name}`,
      personId: actor.id,
      spaceId: space.id,
      subject: space.id,
      details: { from: space.name, to: input.name },
    });
  });
}

/** Adds an active person to the space; adding a member again changes nothing. */
export async function addMember(db: Queryable, actor: Person, input: z.infer<typeof spaceMemberInput>): Promise<void> {
  assertManager(actor);
  await inTransaction(db, async (tx) => {
    const space = await lockSpace(tx, input.space_id);
    const [person] = await tx.select({ name: people.name }).from(people).where(and(eq(people.id, input.person_id), eq(people.status, 'active')));
    if (!person) throw orgErrors.notFound('person');
    const [joined] = await tx.insert(spaceMembers).values({ spaceId: space.id, personId: input.person_id }).onConflictDoNothing().returning({ personId: spaceMembers.personId });
    if (!joined) return;
    await recordActivity(tx, {
      kind: 'space.member_added',
      summary: `added ${person.name} to the space ${space.name}`,
      personId: actor.id,
      spaceId: space.id,
      subject: input.person_id,
    });
  });
}

/** Takes a person out of the space; someone not in it changes nothing. */
export async function removeMember(db: Queryable, actor: Person, input: z.infer<typeof spaceMemberInput>): Promise<void> {
  assertManager(actor);
  await inTransaction(db, async (tx) => {
    const space = await lockSpace(tx, input.space_id);
    const [left] = await tx
      .delete(spaceMembers)
      .where(and(eq(spaceMembers.spaceId, space.id), eq(spaceMembers.personId, input.person_id)))
      .returning({ personId: spaceMembers.personId });
    if (!left) return;
    const [person] = await tx.select({ name: people.name }).from(people).where(eq(people.id, input.person_id));
    await recordActivity(tx, {
      kind: 'space.member_removed',
      summary: `took ${person?.name ?? 'a person'} out of the space ${space.name}`,
      personId: actor.id,
      spaceId: space.id,
      subject: input.person_id,
    });
  });
}
