/**
 * The email channel (DESIGN 4.8): people are told by email when a decision waits for them, when it has waited half
 * its time (and the owners and admins, when it was not theirs), and when an agent asks a question on a task of their
 * space.
 *
 * Told once: the channel writes one `notifications` row per person, subject and reason — the table's unique key — and
 * queues a send job only for a row it created, so an event handed over twice (the announce job ran again) tells
 * nobody twice. The send job sends, then marks the row sent; a row already sent is never sent again. Only a process
 * that dies between the server's acceptance and that mark sends a copy, with the same Message-ID.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Queryable } from '../../platform/database.js';
import { jobKind, type JobInfo } from '../../platform/jobs.js';
import { recordActivity, type NewActivity } from '../activity/records.js';
import type { OrgContext } from '../context.js';
import { decidersOf, ownersAndAdmins, type Recipient } from '../decisions/deciders.js';
import { findDecisionRecord } from '../decisions/records.js';
import type { EventChannel, OrgEvent } from '../events/announce.js';
import { newId } from '../ids.js';
import { agents, notifications, people, spaceMembers, spaces, taskQuestions, tasks } from '../schema.js';
import type { Mailer } from './mailer.js';
import { decisionEmail, questionEmail, type WrittenEmail } from './messages.js';

type Reason = (typeof notifications.reason.enumValues)[number];

const sendNotification = jobKind<{ notification_id: string }>('org.notification-send');

/** With the queue's backoff (1 s, 2 s, 4 s, … capped at 5 minutes), about eight and a half minutes of retries. */
const SEND_ATTEMPTS = 10;

/** Who is told of an event, and why. */
interface Telling {
  subject: string;
  reason: Reason;
  people: Recipient[];
}

export function emailChannel(db: Db): EventChannel {
  return async (event) => {
    const tellings = await recipientsOf(db, event);
    if (tellings.length === 0) return;
    await db.transaction(async (tx) => {
      for (const { subject, reason, people: recipients } of tellings) {
        const wanted = recipients.filter((person) => person.emailNotifications);
        if (wanted.length === 0) continue;
        const created = await tx
          .insert(notifications)
          .values(wanted.map((person) => ({ id: newId('ntf'), personId: person.id, subject, reason })))
          .onConflictDoNothing()
          .returning({ id: notifications.id });
        for (const { id } of created) await sendNotification.enqueue(tx, { notification_id: id }, { maxAttempts: SEND_ATTEMPTS });
      }
    });
  };
}

async function recipientsOf(db: Queryable, event: OrgEvent): Promise<Telling[]> {
  switch (event.type) {
    case 'decision.pending':
      return [{ subject: event.data.decision_id, reason: 'decision', people: await decidersOf(db, event.data.decision_id) }];
    case 'decision.reminder': {
      const deciders = await decidersOf(db, event.data.decision_id);
      const reminded = new Set(deciders.map((person) => person.id));
      const others = (await ownersAndAdmins(db)).filter((person) => !reminded.has(person.id));
      return [
        { subject: event.data.decision_id, reason: 'reminder', people: deciders },
        { subject: event.data.decision_id, reason: 'escalation', people: others },
      ];
    }
    case 'task.question':
      return [{ subject: event.data.question_id, reason: 'task_question', people: await membersOfTaskSpace(db, event.data.task_id) }];
    default:
      return [];
  }
}

/** The active members of the task's space: who may answer its questions in their inbox. */
function membersOfTaskSpace(db: Queryable, taskId: string): Promise<Recipient[]> {
  return db
    .select({ id: people.id, name: people.name, email: people.email, emailNotifications: people.emailNotifications })
    .from(tasks)
    .innerJoin(spaceMembers, eq(spaceMembers.spaceId, tasks.spaceId))
    .innerJoin(people, eq(people.id, spaceMembers.personId))
    .where(and(eq(tasks.id, taskId), eq(people.status, 'active')))
    .orderBy(people.email);
}

/**
 * The send job: writes the email from what the subject is now, sends it, and marks it sent with a
 * `notification.sent` entry (never the body). A refusal or a timeout is retried with backoff; after the last
 * attempt the row is `failed`, with a `notification.failed` entry. Without SMTP_URL no row is ever written; one
 * left from a start that had it fails at once.
 */
export function notificationJobHandlers(ctx: OrgContext, mailer: Mailer | undefined) {
  return sendNotification.handle(async ({ notification_id: id }, job) => {
    const [row] = await ctx.db
      .select({ notification: notifications, name: people.name, email: people.email, wanted: people.emailNotifications, personStatus: people.status })
      .from(notifications)
      .innerJoin(people, eq(people.id, notifications.personId))
      .where(eq(notifications.id, id));
    if (!row || row.notification.status !== 'pending') return;
    const { notification } = row;
    const notSent = (why: string) => settle(ctx.db, notification, { status: 'failed', error: `not sent: ${why}` });
    // The person's choice and standing as they are now, not as they were when the event came.
    if (!row.wanted) return notSent('the person turned email off');
    if (row.personStatus !== 'active') return notSent('the person was removed');
    const written = await writeEmail(ctx.db, notification, ctx.config.publicUrl);
    if ('notSent' in written) return notSent(written.notSent);
    if (!mailer) return notSent('SMTP_URL is not set');
    try {
      await mailer.send({ ...written.email, to: { name: row.name, address: row.email }, messageId: messageId(id, ctx.config.publicUrl) }, job.lost);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await failAttempt(ctx.db, notification, message, job, { ...written.about, personId: notification.personId });
      if (job.lastAttempt) return;
      throw error;
    }
    await settle(ctx.db, notification, { status: 'sent' }, {
      ...written.about,
      personId: notification.personId,
      kind: 'notification.sent',
      summary: `emailed ${row.name}: ${REASON_NAMES[notification.reason]}`,
      subject: notification.subject,
      details: { notification_id: id, reason: notification.reason, to: row.email },
    });
  });
}

const REASON_NAMES: Record<Reason, string> = {
  decision: 'a decision waits for them',
  reminder: 'a reminder that a decision has waited half its time',
  escalation: 'a decision left waiting half its time (escalation)',
  task_question: 'an agent asks a question on a task of their space',
};

type NotificationRow = typeof notifications.$inferSelect;
/** Whom and what an activity entry about a notification names besides the person. */
type About = Pick<NewActivity, 'operationId' | 'agentId' | 'capabilityId' | 'spaceId'>;

/** The email as its subject stands now, or why it is no longer worth sending. */
async function writeEmail(db: Queryable, notification: NotificationRow, origin: string): Promise<{ email: WrittenEmail; about: About } | { notSent: string }> {
  if (notification.reason === 'task_question') {
    const [question] = await db
      .select({ taskId: tasks.id, taskTitle: tasks.title, spaceId: spaces.id, spaceName: spaces.name, agentName: agents.name, question: taskQuestions.text, answer: taskQuestions.answer })
      .from(taskQuestions)
      .innerJoin(tasks, eq(tasks.id, taskQuestions.taskId))
      .innerJoin(spaces, eq(spaces.id, tasks.spaceId))
      .leftJoin(agents, eq(agents.id, taskQuestions.askedByAgentId))
      .where(eq(taskQuestions.id, notification.subject));
    if (!question) return { notSent: 'the question is gone' };
    if (question.answer !== null) return { notSent: 'the question was answered first' };
    return { email: questionEmail(question, origin), about: { spaceId: question.spaceId } };
  }
  const decision = await findDecisionRecord(db, notification.subject);
  if (!decision) return { notSent: 'the decision is gone' };
  if (decision.status !== 'pending') return { notSent: `the decision was ${decision.status} first` };
  const asked = notification.reason === 'escalation' ? (await decidersOf(db, decision.id)).map((person) => person.name) : [];
  return {
    email: decisionEmail(notification.reason, decision, origin, asked),
    about: { operationId: decision.operation_id, agentId: decision.agent.id, capabilityId: decision.action.capability_id, spaceId: decision.action.space_id },
  };
}

/** Ends a pending notification (once: a row no longer pending is left as it is), with its activity entry. */
async function settle(db: Db, notification: NotificationRow, outcome: { status: 'sent' } | { status: 'failed'; error: string }, entry?: NewActivity): Promise<void> {
  await db.transaction(async (tx) => {
    const [ended] = await tx
      .update(notifications)
      .set(
        outcome.status === 'sent'
          ? { status: 'sent', sentAt: sql`now()`, attempts: sql`${notifications.attempts} + 1`, lastError: null }
          : { status: 'failed', lastError: outcome.error },
      )
      .where(and(eq(notifications.id, notification.id), eq(notifications.status, 'pending')))
      .returning({ id: notifications.id });
    if (ended && entry) await recordActivity(tx, entry);
  });
}

/** Counts a failed attempt; the last one fails the notification for good, in the activity log. */
async function failAttempt(db: Db, notification: NotificationRow, error: string, job: JobInfo, about: About & { personId: string }): Promise<void> {
  await db.transaction(async (tx) => {
    const [counted] = await tx
      .update(notifications)
      .set({ attempts: sql`${notifications.attempts} + 1`, lastError: error.slice(0, 1000), ...(job.lastAttempt ? { status: 'failed' as const } : {}) })
      .where(and(eq(notifications.id, notification.id), eq(notifications.status, 'pending')))
      .returning({ attempts: notifications.attempts });
    if (!counted || !job.lastAttempt) return;
    await recordActivity(tx, {
      ...about,
      kind: 'notification.failed',
      summary: `could not email: ${REASON_NAMES[notification.reason]} (${counted.attempts} attempts)`,
      subject: notification.subject,
      details: { notification_id: notification.id, reason: notification.reason, attempts: counted.attempts, error: error.slice(0, 500) },
    });
  });
}

/** `<ntf_…@org.example>`: unique per notification, the same on every attempt. */
function messageId(id: string, origin: string): string {
  return `<${id}@${new URL(origin).hostname}>`;
}
