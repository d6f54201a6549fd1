/**
 * Invitations by email (DESIGN 4.6, 4.8): with SMTP_URL set, the one-time link an owner or admin made is also sent to
 * the invited address, from the job queue (retried with backoff), queued in the invitation's own transaction.
 *
 * Only the token's SHA-256 is stored with the invitation, so the link travels in the job's payload until the email
 * is sent; the queue deletes a job once it succeeds. A withdrawn, used or expired invitation is not sent.
 */
import { eq } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { jobKind } from '../../platform/jobs.js';
import { toIso } from '../../platform/time.js';
import { recordActivity } from '../activity/records.js';
import type { OrgContext } from '../context.js';
import { invitations, organization, people } from '../schema.js';
import type { Mailer } from './mailer.js';
import { invitationEmail } from './messages.js';

const sendInvitation = jobKind<{ invitation_id: string; link: string }>('org.invitation-send');

/** With the queue's backoff, about eight and a half minutes of retries, as for the other emails. */
const SEND_ATTEMPTS = 10;

/** Queues the invitation's email in `tx`, the transaction that made it. */
export async function queueInvitationEmail(tx: Queryable, invitationId: string, link: string): Promise<void> {
  await sendInvitation.enqueue(tx, { invitation_id: invitationId, link }, { maxAttempts: SEND_ATTEMPTS });
}

export function invitationJobHandlers(ctx: OrgContext, mailer: Mailer | undefined) {
  return sendInvitation.handle(async ({ invitation_id: id, link }, job) => {
    const [row] = await ctx.db
      .select({ invitation: invitations, inviter: people.name })
      .from(invitations)
      .leftJoin(people, eq(people.id, invitations.invitedBy))
      .where(eq(invitations.id, id));
    const invitation = row?.invitation;
    // Withdrawn, used or expired before it went: the link no longer works, so it is not sent.
    if (!mailer || !invitation || invitation.acceptedAt || invitation.revokedAt || Date.parse(toIso(invitation.expiresAt)) <= Date.now()) return;
    const [org] = await ctx.db.select({ name: organization.name }).from(organization).limit(1);
    const facts = { name: invitation.name, role: invitation.role, organization: org?.name ?? 'the organization', inviter: row.inviter, expiresAt: toIso(invitation.expiresAt) };
    const written = invitationEmail(facts, link, ctx.config.publicUrl);
    const messageId = `<${id}@${new URL(ctx.config.publicUrl).hostname}>`;
    const told = { personId: invitation.invitedBy, subject: id };
    try {
      await mailer.send({ ...written, to: { name: invitation.name, address: invitation.email }, messageId }, job.lost);
    } catch (error) {
      if (!job.lastAttempt) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      await recordActivity(ctx.db, { ...told, kind: 'notification.failed', summary: `could not email ${invitation.name} their invitation: ${reason}`, details: { reason: 'invitation', to: invitation.email } });
      return;
    }
    await recordActivity(ctx.db, { ...told, kind: 'notification.sent', summary: `emailed ${invitation.name} their invitation`, details: { reason: 'invitation', to: invitation.email } });
  });
}
