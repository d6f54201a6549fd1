/**
 * DESIGN 4.4: "queued → running → succeeded | failed | cancelled, and paused (awaiting a person's decision;
 * carries decision_id) which returns to running on approve and ends failed with error denied on deny or
 * expired when the decision expires."
 *
 * The table is the whole state machine: `move()` applies an event with one conditional UPDATE whose
 * `WHERE status IN (…)` comes from the table, so two processes racing to move one operation cannot both win,
 * and a refusal names the status the operation is really in.
 */
import { eq, inArray, sql, and, type WithSubquery } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { orgErrors } from '../errors.js';
import { operations } from '../schema.js';

export const OPERATION_STATUSES = ['queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export const OPERATION_KINDS = ['ask', 'message', 'task', 'capability'] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

interface Transition {
  readonly from: readonly OperationStatus[];
  readonly to: OperationStatus;
}

export const OPERATION_TRANSITIONS = {
  /** A worker takes the job. */
  start: { from: ['queued'], to: 'running' },
  /** The gate asked for a person's decision. */
  pause: { from: ['running'], to: 'paused' },
  /** The decision was approved: the work runs again. */
  resume: { from: ['paused'], to: 'running' },
  succeed: { from: ['running'], to: 'succeeded' },
  /** Denied, expired, undeliverable, or failed while running. */
  fail: { from: ['queued', 'running', 'paused'], to: 'failed' },
  cancel: { from: ['queued', 'running', 'paused'], to: 'cancelled' },
} as const satisfies Record<string, Transition>;

export type OperationEvent = keyof typeof OPERATION_TRANSITIONS;

export const SETTLED_STATUSES: readonly OperationStatus[] = ['succeeded', 'failed', 'cancelled'];

/** Settled, or waiting on a person: a caller waiting with `wait_seconds` stops waiting at either. */
export function isAnswered(status: OperationStatus): boolean {
  return status === 'paused' || SETTLED_STATUSES.includes(status);
}

/** The status after `event`, or the `invalid_state` refusal naming the current one. Pure. */
export function nextStatus(current: OperationStatus, event: OperationEvent): OperationStatus {
  const transition: Transition = OPERATION_TRANSITIONS[event];
  if (!transition.from.includes(current)) throw refusal(current, event);
  return transition.to;
}

export type OperationRow = typeof operations.$inferSelect;

/** Columns an event may set beside the status (the result, the error, the decision). */
export type MoveChanges = Partial<Pick<OperationRow, 'result' | 'error' | 'decisionId'>>;

/**
 * Applies `event` to the stored operation, or throws `invalid_state` (or `not_found`) and changes nothing of the
 * operation. `alongside`: writes that go with the move in the same statement (they run whether it moves or not).
 */
export async function move(db: Queryable, id: string, event: OperationEvent, changes: MoveChanges = {}, alongside: WithSubquery[] = []): Promise<OperationRow> {
  const transition: Transition = OPERATION_TRANSITIONS[event];
  const settles = SETTLED_STATUSES.includes(transition.to);
  const [row] = await (alongside.length ? db.with(...alongside) : db)
    .update(operations)
    .set({
      ...changes,
      status: transition.to,
      updatedAt: sql`greatest(now(), ${operations.createdAt})`,
      ...(settles ? { finishedAt: sql`now()` } : {}),
    })
    .where(and(eq(operations.id, id), inArray(operations.status, [...transition.from])))
    .returning();
  if (row) return row;
  const [current] = await db.select({ status: operations.status }).from(operations).where(eq(operations.id, id));
  if (!current) throw orgErrors.notFound('operation');
  throw refusal(current.status, event);
}

function refusal(current: OperationStatus, event: OperationEvent) {
  return orgErrors.invalidState(`the operation is ${current}, so it cannot ${event}`, { status: current, event });
}
