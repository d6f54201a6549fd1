/** People of the organization (DESIGN 4.1): who signs in, consents, and is responsible for agents. */
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { recordActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import { text } from '../fields.js';
import { newId } from '../ids.js';
import type { UpsertOutcome } from '../../platform/upsert.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { people, spaceMembers, webSessions } from '../schema.js';

export type Role = 'owner' | 'admin' | 'member';

/** DESIGN 4.6: owners and admins see everything and run the organization from the console; members do neither. */
export function isManager(person: { role: string }): boolean {
  return person.role === 'owner' || person.role === 'admin';
}

export interface Person {
  id: string;
  email: string;
  name: string;
  role: Role;
}

/**
 * A person's name as everyone else reads it (inbox, decisions, activity, memory's provenance): one line, without
 * control characters or the bidirectional ones that would reorder the text shown around it.
 */
export const personName = text()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine((name) => !/[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u.test(name), 'must be one line, without control characters');

const personColumns = { id: people.id, email: people.email, name: people.name, role: people.role };

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function getPerson(db: Queryable, id: string): Promise<Person | null> {
  const [row] = await db.select(personColumns).from(people).where(eq(people.id, id));
  return row ?? null;
}

export async function findPersonByEmail(db: Queryable, email: string): Promise<Person | null> {
  const [row] = await db.select(personColumns).from(people).where(eq(people.email, normalizeEmail(email)));
  return row ?? null;
}

/**
 * The person whose email and password match, or null; takes as long for an unknown email as for a known one. A
 * removed person is not found at all, so they get the same answer as a wrong password.
 */
export async function authenticate(db: Queryable, email: string, password: string): Promise<Person | null> {
  const [row] = await db
    .select({ ...personColumns, passwordHash: people.passwordHash })
    .from(people)
    .where(and(eq(people.email, normalizeEmail(email)), eq(people.status, 'active')));
  const ok = await verifyPassword(password, row?.passwordHash ?? null);
  if (!ok || !row) return null;
  const { passwordHash: _hash, ...person } = row;
  return person;
}

/**
 * The people who can be picked (an agent's responsible person, a space's new member): active ones, by name; with
 * `notInSpace`, only those not yet in that space.
 */
export async function listActivePeople(db: Queryable, options: { notInSpace?: string } = {}): Promise<Person[]> {
  const outside = options.notInSpace
    ? sql`NOT EXISTS (SELECT 1 FROM ${spaceMembers} WHERE ${spaceMembers.personId} = ${people.id} AND ${spaceMembers.spaceId} = ${options.notInSpace})`
    : undefined;
  return db
    .select(personColumns)
    .from(people)
    .where(and(eq(people.status, 'active'), outside))
    .orderBy(asc(people.name), asc(people.email));
}

export interface PersonInput {
  email: string;
  name: string;
  role: Role;
  /** Sets the password; leaving it out keeps the current one (or none for a new person). */
  password?: string;
}

/** Creates the person or updates name and role; the password changes only when a different one is given. */
export async function upsertPerson(db: Queryable, input: PersonInput): Promise<{ person: Person; outcome: UpsertOutcome }> {
  const email = normalizeEmail(input.email);
  const [existing] = await db
    .select({ id: people.id, name: people.name, role: people.role, passwordHash: people.passwordHash })
    .from(people)
    .where(eq(people.email, email));
  let passwordHash = existing?.passwordHash ?? null;
  if (input.password !== undefined && !(await verifyPassword(input.password, passwordHash))) {
    passwordHash = await hashPassword(input.password);
  }
  if (existing) {
    const person = { id: existing.id, email, name: input.name, role: input.role };
    if (existing.name === input.name && existing.role === input.role && existing.passwordHash === passwordHash) return { person, outcome: 'unchanged' };
    await db
      .update(people)
      .set({ name: input.name, role: input.role, passwordHash, updatedAt: sql`now()` })
      .where(eq(people.id, existing.id));
    return { person, outcome: 'updated' };
  }
  const id = newId('per');
  await db.insert(people).values({ id, email, name: input.name, role: input.role, passwordHash });
  return { person: { id, email, name: input.name, role: input.role }, outcome: 'created' };
}

/**
 * Sets the person's password (the caller has checked it against `passwordRule`) and ends their web sessions,
 * all but `keepSessionId` (the page the person changed it on): whoever learned the old password is signed out.
 * Returns how many sessions ended. Run it in a transaction, so both take effect together.
 */
export async function setPassword(db: Queryable, personId: string, password: string, keepSessionId?: string): Promise<number> {
  const passwordHash = await hashPassword(password);
  await db.update(people).set({ passwordHash, updatedAt: sql`now()` }).where(eq(people.id, personId));
  const ended = await endWebSessions(db, personId, keepSessionId);
  await recordActivity(db, {
    kind: 'person.password_changed',
    summary: `changed the password; ${ended} other web session${ended === 1 ? '' : 's'} signed out`,
    personId,
    details: { sessions_ended: ended },
  });
  return ended;
}

/**
 * Ends the person's web sessions, all but `keepSessionId` when given, and answers how many of them were live (what a
 * person counts as "signed in"; an expired one opened nothing already and goes with them). The ended ones open
 * nothing from the next request on, in every process: each request reads its session from the database.
 */
export async function endWebSessions(db: Queryable, personId: string, keepSessionId?: string): Promise<number> {
  const ended = await db
    .delete(webSessions)
    .where(and(eq(webSessions.personId, personId), keepSessionId === undefined ? undefined : ne(webSessions.id, keepSessionId)))
    .returning({ live: sql<boolean>`${webSessions.expiresAt} > now()` });
  return ended.filter((session) => session.live).length;
}

/** The person's choice on /account (DESIGN 4.8): whether they are emailed when a decision or a question waits for them. */
export async function emailNotificationsOf(db: Queryable, personId: string): Promise<boolean> {
  const [row] = await db.select({ on: people.emailNotifications }).from(people).where(eq(people.id, personId));
  return row?.on ?? false;
}

/** Saves that choice; a change (not a repeat) is recorded in the activity log. Run it in a transaction. */
export async function setEmailNotifications(db: Queryable, personId: string, on: boolean): Promise<void> {
  const changed = await db
    .update(people)
    .set({ emailNotifications: on, updatedAt: sql`now()` })
    .where(and(eq(people.id, personId), ne(people.emailNotifications, on)))
    .returning({ id: people.id });
  if (changed.length === 0) return;
  await recordActivity(db, {
    kind: 'person.notifications_changed',
    summary: on ? 'turned email notifications on' : 'turned email notifications off',
    personId,
    details: { email_notifications: on },
  });
}

/** Who keeps the person's record: the organization file (name and role are changed there) or the console. */
export async function personManagedBy(db: Queryable, personId: string): Promise<'file' | 'console'> {
  const [row] = await db.select({ managedBy: people.managedBy }).from(people).where(eq(people.id, personId));
  return row?.managedBy ?? 'console';
}

/**
 * The person changes the name others know them by (`personName`, checked by the caller); a change, not a repeat, is
 * recorded in the activity log. Records written earlier keep the name they were written with (memory's provenance).
 * A person the organization file declares is named there. Run it in a transaction.
 */
export async function renamePerson(db: Queryable, personId: string, name: string, file: string): Promise<boolean> {
  const [before] = await db.select({ name: people.name, managedBy: people.managedBy }).from(people).where(eq(people.id, personId)).for('update');
  if (!before) throw orgErrors.notFound('person');
  if (before.managedBy === 'file') throw orgErrors.managedByFile('your name', file);
  return storeName(db, { id: personId, name: before.name }, name);
}

/**
 * Writes a person's new name and its `person.renamed` entry, after the caller's checks: by the person themself, or
 * by `by` (an owner or admin, people/manage.ts `renameOther`) with the person as the entry's subject. A repeat of the
 * name writes nothing; the answer says whether the name changed.
 */
export async function storeName(db: Queryable, person: { id: string; name: string }, name: string, by?: string): Promise<boolean> {
  if (person.name === name) return false;
  await db.update(people).set({ name, updatedAt: sql`now()` }).where(eq(people.id, person.id));
  await recordActivity(db, {
    kind: 'person.renamed',
    ...(by === undefined
      ? { summary: `changed their name from “${person.name}” to “${name}”`, personId: person.id }
      : { summary: `changed the name of “${person.name}” to “${name}”`, personId: by, subject: person.id }),
    details: { from: person.name, to: name },
  });
  return true;
}
