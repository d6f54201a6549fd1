/**
 * The organization's events (DESIGN 4.8): what happened that people or other tools should be told about. A change
 * announces its event in its own transaction; that only queues one `org.announce` job, so the event exists exactly
 * when the change committed. The job hands the event to every channel (email, event webhooks), which the composition
 * root gives it: this module imports no feature, so the operations engine may announce too.
 *
 * A channel must take the same event twice without telling anyone twice — the job may run again after a crash — so
 * each keys what it sends by the event's id (`event_id` is the `webhook-id` of every webhook attempt).
 */
import type { Queryable } from '../../platform/database.js';
import { sql, type SQL } from 'drizzle-orm';
import { enqueueJobStatement, jobKind } from '../../platform/jobs.js';
import { newId } from '../ids.js';

/** Each event type and what it names; the bodies sent are built from these when the job runs (README: "Events"). */
export interface OrgEvents {
  'decision.pending': { decision_id: string };
  'decision.resolved': { decision_id: string };
  /** Half-way to its expiry, a still open decision reminds its person and tells the owners and admins. */
  'decision.reminder': { decision_id: string };
  'operation.failed': { operation_id: string };
  'task.question': { task_id: string; question_id: string };
  /** An agent past 80 % of its monthly budget, once per agent and month. */
  'budget.threshold': { agent_id: string; month: string };
}

export type OrgEventType = keyof OrgEvents;
export const ORG_EVENT_TYPES = [
  'decision.pending',
  'decision.resolved',
  'decision.reminder',
  'operation.failed',
  'task.question',
  'budget.threshold',
] as const satisfies readonly OrgEventType[];

/** An announced event: its id, type, when it happened, and what it names. */
export type OrgEvent = { [T in OrgEventType]: { event_id: string; type: T; at: string; data: OrgEvents[T] } }[OrgEventType];

/** One way of telling (email, event webhooks): called once or more per event, it tells each recipient once. */
export type EventChannel = (event: OrgEvent) => Promise<void>;

const announceJob = jobKind<OrgEvent>('org.announce');

/** Announces an event in `db`, the transaction of the change it is about. */
export async function announce<T extends OrgEventType>(db: Queryable, type: T, data: OrgEvents[T]): Promise<void> {
  await announceJob.enqueue(db, newEvent(type, data));
}

/** `announce`'s statement, to embed in the statement of the change (a CTE); `where` as in `activityStatement`. */
export function announceStatement<T extends OrgEventType>(type: T, data: OrgEvents[T], where: SQL): SQL {
  return enqueueJobStatement(announceJob.kind, newEvent(type, data), {}, sql`WHERE ${where}`);
}

function newEvent<T extends OrgEventType>(type: T, data: OrgEvents[T]): OrgEvent {
  return { event_id: newId('evt'), type, at: new Date().toISOString(), data } as OrgEvent;
}

/** The job that hands each event to every channel; a channel that throws has the job retried (channels are idempotent). */
export function announceJobHandlers(channels: readonly EventChannel[]) {
  return announceJob.handle(async (event) => {
    for (const channel of channels) await channel(event);
  });
}
