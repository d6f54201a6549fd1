/**
 * Invitations (DESIGN 4.6, issue 20 item 1): an owner or admin invites a person by a one-time link that expires.
 * The link carries a random 256-bit token; only its SHA-256 is stored, so the database never holds a usable
 * link, and the inviter sees the link once. Whoever opens it before it expires sets their own password and
 * becomes the person, in the spaces the invitation names; the link is then used up. An invitation can be
 * withdrawn while it waits.
 *
 * A removed person invited again comes back as the same row (their old records keep pointing at them).
 */
import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, gt, inArray, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import { inTransaction, type Queryable } from '../../platform/database.js';
import { toIso } from '../../platform/time.js';
import { recordActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import { id, text } from '../fields.js';
import { newId } from '../ids.js';
import { invitations, organization, people, spaceMembers, spaces } from '../schema.js';
import { assertMayGive, ROLES } from './manage.js';
import { normalizeEmail, personName, type Person } from './records.js';

/** How long a link works: long enough to reach someone on leave for a week, short enough not to linger. */
export const INVITATION_DAYS = 7;

export const inviteInput = z.object({
  email: z.string().trim().toLowerCase().pipe(z.email('must be an email address')).pipe(text().max(320)),
  name: personName,
  role: z.enum(ROLES),
  space_ids: z.array(id()).max(100).default([]),
});

export interface PendingInvitation {
  id: string;
  email: string;
  name: string;
  role: Person['role'];
  space_ids: string[];
  invited_by: string | null;
  expires_at: string;
  created_at: string;
}

/**
 * The link that carries an invitation's token: shown to the inviter once, and what an email inviting the person
 * would hold (the token exists only in `invitePerson`'s answer, so whoever sends it must be handed it there).
 */
export function invitationLink(publicUrl: string, token: string): string {
  return `${publicUrl}/join/${token}`;
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** Invitations neither used nor withdrawn nor past their date. */
const pending = () => and(isNull(invitations.acceptedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, sql`now()`));

/**
 * Stores an invitation and returns it with its token, which exists nowhere else: the caller shows the link once
 * (and is where an email with the link would be sent from). Refused for an email that is already an active person
 * or already has a pending invitation (withdraw it to send a new link).
 */
export async function invitePerson(db: Queryable, actor: Person, input: z.infer<typeof inviteInput>): Promise<{ invitation: PendingInvitation; token: string }> {
  assertMayGive(actor, input.role);
  return inTransaction(db, async (tx) => {
    const email = normalizeEmail(input.email);
    const [member] = await tx.select({ id: people.id }).from(people).where(and(eq(people.email, email), eq(people.status, 'active')));
    if (member) throw orgErrors.invalidState(`${email} is already a member of the organization`);
    const [waiting] = await tx.select({ id: invitations.id }).from(invitations).where(and(eq(invitations.email, email), pending()));
    if (waiting) throw orgErrors.invalidState(`an invitation for ${email} is already waiting: withdraw it to send a new link`);
    const spaceIds = [...new Set(input.space_ids)];
    if (spaceIds.length) {
      const found = await tx.select({ id: spaces.id }).from(spaces).where(inArray(spaces.id, spaceIds));
      if (found.length !== spaceIds.length) throw orgErrors.invalidArgument('space_ids', 'names a space that does not exist');
    }
    const token = `inv_${randomBytes(32).toString('base64url')}`;
    const [row] = await tx
      .insert(invitations)
      .values({
        id: newId('inv'),
        email,
        name: input.name,
        role: input.role,
        spaceIds,
        tokenHash: hashToken(token),
        invitedBy: actor.id,
        expiresAt: sql`now() + make_interval(days => ${INVITATION_DAYS})`,
      })
      .returning();
    await recordActivity(tx, {
      kind: 'person.invited',
      summary: `invited ${input.name} (${email}) as ${input.role}`,
      personId: actor.id,
      subject: row.id,
      details: { email, role: input.role, space_ids: spaceIds, expires_at: toIso(row.expiresAt) },
    });
    return { invitation: toPending(row, actor.name), token };
  });
}

function toPending(row: typeof invitations.$inferSelect, invitedBy: string | null): PendingInvitation {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    space_ids: row.spaceIds,
    invited_by: invitedBy,
    expires_at: toIso(row.expiresAt),
    created_at: toIso(row.createdAt),
  };
}

/** The invitations still waiting, newest first, with the inviter's name. */
export async function listPendingInvitations(db: Queryable): Promise<PendingInvitation[]> {
  const rows = await db
    .select({ invitation: invitations, inviter: people.name })
    .from(invitations)
    .leftJoin(people, eq(people.id, invitations.invitedBy))
    .where(pending())
    .orderBy(desc(invitations.createdAt))
    .limit(200);
  return rows.map((row) => toPending(row.invitation, row.inviter));
}

export const withdrawInvitationInput = z.object({ invitation_id: id() });

export async function withdrawInvitation(db: Queryable, actor: Person, input: z.infer<typeof withdrawInvitationInput>): Promise<void> {
  await inTransaction(db, async (tx) => {
    const [current] = await tx.select({ role: invitations.role }).from(invitations).where(and(eq(invitations.id, input.invitation_id), pending()));
    if (!current) throw orgErrors.notFound('waiting invitation');
    assertMayGive(actor, current.role);
    const [row] = await tx
      .update(invitations)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(invitations.id, input.invitation_id), pending()))
      .returning({ id: invitations.id, email: invitations.email });
    if (!row) throw orgErrors.notFound('waiting invitation');
    await recordActivity(tx, { kind: 'invitation.withdrawn', summary: `withdrew the invitation of ${row.email}`, personId: actor.id, subject: row.id });
  });
}

/** What a link leads to: its invitation and whether it can still be used; null for a token never issued. */
export async function findInvitation(
  db: Queryable,
  token: string,
): Promise<{ state: 'waiting' | 'used' | 'withdrawn' | 'expired'; email: string; name: string; organization: string } | null> {
  const [row] = await db
    .select({
      email: invitations.email,
      name: invitations.name,
      acceptedAt: invitations.acceptedAt,
      revokedAt: invitations.revokedAt,
      expired: sql<boolean>`${invitations.expiresAt} <= now()`,
    })
    .from(invitations)
    .where(eq(invitations.tokenHash, hashToken(token)));
  if (!row) return null;
  const state = row.acceptedAt ? 'used' : row.revokedAt ? 'withdrawn' : row.expired ? 'expired' : 'waiting';
  const [org] = await db.select({ name: organization.name }).from(organization).limit(1);
  return { state, email: row.email, name: row.name, organization: org?.name ?? 'the organization' };
}

/**
 * Uses the link up and makes (or brings back) the person with the password they chose (hashed by the caller,
 * outside the transaction: scrypt is slow on purpose). Null when the link can no longer be used — used a moment
 * ago by someone else, withdrawn or expired: the claim is one conditional update, so a link works exactly once.
 */
export async function acceptInvitation(db: Queryable, token: string, passwordHash: string): Promise<{ personId: string } | null> {
  return inTransaction(db, async (tx) => {
    const [invitation] = await tx
      .update(invitations)
      .set({ acceptedAt: sql`now()` })
      .where(and(eq(invitations.tokenHash, hashToken(token)), pending()))
      .returning();
    if (!invitation) return null;
    const [existing] = await tx.select({ id: people.id, status: people.status }).from(people).where(eq(people.email, invitation.email)).for('update');
    // Someone made this person another way (the organization file) while the link waited.
    if (existing?.status === 'active') throw orgErrors.invalidState(`${invitation.email} is already a member of the organization: sign in instead`);
    const person = { name: invitation.name, role: invitation.role, passwordHash, status: 'active' as const, updatedAt: sql`now()` };
    const personId = existing?.id ?? newId('per');
    if (existing) await tx.update(people).set(person).where(eq(people.id, personId));
    else await tx.insert(people).values({ id: personId, email: invitation.email, ...person });
    await tx.update(invitations).set({ personId }).where(eq(invitations.id, invitation.id));
    // Spaces deleted since the invitation was made are skipped.
    const stillThere = invitation.spaceIds.length ? await tx.select({ id: spaces.id }).from(spaces).where(inArray(spaces.id, invitation.spaceIds)) : [];
    if (stillThere.length) await tx.insert(spaceMembers).values(stillThere.map((space) => ({ spaceId: space.id, personId }))).onConflictDoNothing();
    await recordActivity(tx, {
      kind: 'person.joined',
      summary: `joined the organization as ${invitation.role}${existing ? ' (invited back)' : ''}`,
      personId,
      subject: invitation.id,
      details: { invited_by: invitation.invitedBy, space_ids: invitation.spaceIds },
    });
    return { personId };
  });
}
