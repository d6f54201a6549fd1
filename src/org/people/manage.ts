/**
 * Owners and admins change who belongs (DESIGN 4.6, issue 20 item 1): a person's role and name, and removing a person.
 * Access rules as data (`ROLES_GIVEN_BY`): an owner gives any role; an admin gives admin or member and never makes,
 * unmakes or removes an owner, so an admin cannot take the organization over. The organization always keeps one
 * active owner. A person the organization file declares is changed only in the file.
 *
 * Every change is recorded in the activity log in its own transaction, with the person who made it.
 */
import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { revokePersonGrants, type Changed } from '../../auth/index.js';
import { inTransaction, type Queryable } from '../../platform/database.js';
import { recordActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import { id } from '../fields.js';
import { people, spaceMembers } from '../schema.js';
import { endWebSessions, isManager, personName, storeName, type Person, type Role } from './records.js';

export const ROLES = ['owner', 'admin', 'member'] as const satisfies readonly Role[];

/** The roles each role may give (and take away): an admin never makes or unmakes an owner. */
export const ROLES_GIVEN_BY: Record<Role, readonly Role[]> = {
  owner: ROLES,
  admin: ['admin', 'member'],
  member: [],
};

/** Owners and admins manage the organization; anyone else is refused every change. */
export function assertManager(actor: { role: string }, what = 'the organization'): void {
  if (!isManager(actor)) throw orgErrors.forbidden(`only owners and admins manage ${what}`);
}

/** Refuses giving or taking `role` when the actor may not (an admin and an owner's role). */
export function assertMayGive(actor: Person, role: Role): void {
  assertManager(actor);
  if (!ROLES_GIVEN_BY[actor.role].includes(role)) throw orgErrors.forbidden(`as ${article(actor.role)} you cannot make or change ${article(role)}: ask an owner`);
}

function article(role: Role): string {
  return role === 'owner' || role === 'admin' ? `an ${role}` : `a ${role}`;
}

export const changeRoleInput = z.object({ person_id: id(), role: z.enum(ROLES) });
export const removePersonInput = z.object({ person_id: id() });
export const renameOtherInput = z.object({ person_id: id(), name: personName });

interface Target {
  id: string;
  name: string;
  role: Role;
  managedBy: 'file' | 'console';
}

/** The active person an owner or admin is about to change, locked until the change commits. */
async function lockTarget(tx: Queryable, personId: string): Promise<Target> {
  const [target] = await tx
    .select({ id: people.id, name: people.name, role: people.role, managedBy: people.managedBy })
    .from(people)
    .where(and(eq(people.id, personId), eq(people.status, 'active')))
    .for('update');
  if (!target) throw orgErrors.notFound('person');
  if (target.managedBy === 'file') throw orgErrors.managedByFile(target.name);
  return target;
}

/**
 * Refuses a change that would leave no active owner. The owners' rows are locked first, so two owners demoting
 * each other at once are told apart: the second sees the first's change and is refused.
 */
async function assertAnotherOwner(tx: Queryable, target: Target, change: string): Promise<void> {
  if (target.role !== 'owner') return;
  const owners = await tx
    .select({ id: people.id })
    .from(people)
    .where(and(eq(people.role, 'owner'), eq(people.status, 'active')))
    .for('update');
  if (!owners.some((owner) => owner.id !== target.id)) {
    throw orgErrors.invalidState(`${target.name} is the only owner: make someone else an owner before you ${change}`);
  }
}

/** Gives a person another role; the answer says whether it changed (the role they already have changes nothing). */
export async function changeRole(db: Queryable, actor: Person, input: z.infer<typeof changeRoleInput>): Promise<boolean> {
  return inTransaction(db, async (tx) => {
    const target = await lockTarget(tx, input.person_id);
    assertMayGive(actor, target.role);
    assertMayGive(actor, input.role);
    if (target.role === input.role) return false;
    if (input.role !== 'owner') await assertAnotherOwner(tx, target, `change their role`);
    await tx.update(people).set({ role: input.role, updatedAt: sql`now()` }).where(eq(people.id, target.id));
    await recordActivity(tx, {
      kind: 'person.role_changed',
      summary: `changed ${target.name}'s role from ${target.role} to ${input.role}`,
      personId: actor.id,
      subject: target.id,
      details: { from: target.role, to: input.role },
    });
    return true;
  });
}

/**
 * An owner or admin corrects the name another person is known by (as each person may on /account): the same rule
 * (`personName`), never an owner's by an admin, never a name the organization file gives. The answer says whether
 * the name changed.
 */
export async function renameOther(db: Queryable, actor: Person, input: z.infer<typeof renameOtherInput>): Promise<boolean> {
  return inTransaction(db, async (tx) => {
    const target = await lockTarget(tx, input.person_id);
    assertMayGive(actor, target.role);
    return storeName(tx, target, input.name, actor.id);
  });
}

/**
 * Removes a person at once (DESIGN 4.6): they can no longer sign in (status `removed`, no password), their web
 * sessions end, every OAuth grant and token they gave is revoked (so no client acts for them any more), and they
 * leave every space (`changed` hears of the revocation, for the enclosing write to announce). The row stays, so old records keep their name; inviting the email again brings them back.
 */
export async function removePerson(db: Queryable, actor: Person, input: z.infer<typeof removePersonInput>, changed: Changed): Promise<void> {
  await inTransaction(db, async (tx) => {
    const target = await lockTarget(tx, input.person_id);
    assertMayGive(actor, target.role);
    await assertAnotherOwner(tx, target, 'remove them');
    await tx.update(people).set({ status: 'removed', passwordHash: null, updatedAt: sql`now()` }).where(eq(people.id, target.id));
    const sessions = await endWebSessions(tx, target.id);
    const spaces = await tx.delete(spaceMembers).where(eq(spaceMembers.personId, target.id)).returning({ id: spaceMembers.spaceId });
    const grants = await revokePersonGrants(tx, target.id, changed);
    await recordActivity(tx, {
      kind: 'person.removed',
      summary: `removed ${target.name} from the organization`,
      personId: actor.id,
      subject: target.id,
      details: { sessions_ended: sessions, grants_revoked: grants, spaces_left: spaces.map((space) => space.id) },
    });
  });
}
