/**
 * DESIGN 4.4: "queued → running → succeeded | failed | cancelled, and paused (awaiting a person's decision;
 * carries decision_id) which returns to running on approve and ends failed with error denied on deny or
 * expired when the decision expires."
 *
 * The table is the whole state machine: `move()` applies an event with one conditional UPDATE whose
 * `WHERE status IN (…)` comes from the table, so two processes racing to move one operation cannot both win,
 * and a refusal names the status the operation is really in.
 */
import { sql } from 'drizzle-orm';
import { stateTable } from '../../platform/state-table.js';
import { announceStatement } from '../events/announce.js';
import { activityStatement, type ActivityKind, type NewActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import { operations } from '../schema.js';

export const OPERATION_STATUSES = ['queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export const OPERATION_KINDS = ['ask', 'message', 'task', 'capability'] as const;
export type OperationKind = (typeof OPERATION_KINDS)[number];

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
  /** A progress event (the agent API's `/progress`): the status stays, and an ended operation takes none. */
  progress: { from: ['queued', 'running', 'paused'], to: null },
} as const;

export type OperationEvent = keyof typeof OPERATION_TRANSITIONS;

export const SETTLED_STATUSES: readonly OperationStatus[] = ['succeeded', 'failed', 'cancelled'];

/** Settled, or waiting on a person: a caller waiting with `wait_seconds` stops waiting at either. */
export function isAnswered(status: OperationStatus): boolean {
  return status === 'paused' || SETTLED_STATUSES.includes(status);
}

export type OperationRow = typeof operations.$inferSelect;

/** What the activity log tells of an operation. */
type OperationTold = Pick<OperationRow, 'id' | 'kind' | 'status' | 'personId' | 'clientId' | 'agentId' | 'spaceId' | 'input' | 'error' | 'decisionId' | 'traceparent'>;

/** What each move is in the activity log; a progress event is not an entry (the operation keeps its progress). */
const MOVE_ACTIVITY: Partial<Record<OperationEvent, ActivityKind>> = {
  start: 'operation.running',
  pause: 'operation.paused',
  resume: 'operation.resumed',
  succeed: 'operation.succeeded',
  fail: 'operation.failed',
  cancel: 'operation.cancelled',
};

/**
 * The activity entry of an operation's step: on behalf of its person, through its client, by its agent, on the
 * trace of the request that started it.
 */
export function operationActivity(row: OperationTold, kind: ActivityKind): NewActivity {
  const step = kind.slice('operation.'.length);
  return {
    ...aboutOperation(row),
    kind,
    summary: `${row.kind} operation ${step}${row.error && kind === 'operation.failed' ? `: ${row.error.code} — ${row.error.message}` : ''}`,
    subject: row.id,
    details: {
      operation_kind: row.kind,
      status: row.status,
      ...(kind === 'operation.failed' && row.error ? { error: row.error } : {}),
      ...(kind === 'operation.paused' && row.decisionId ? { decision_id: row.decisionId } : {}),
    },
  };
}

/** What every entry about an operation names: its space, person, client, agent and capability, and its trace. */
export function aboutOperation(row: OperationTold): Omit<NewActivity, 'kind' | 'summary'> {
  return {
    spaceId: row.spaceId,
    personId: row.personId,
    clientId: row.clientId,
    agentId: row.agentId,
    capabilityId: row.kind === 'capability' ? (row.input as { capability_id?: string }).capability_id : undefined,
    operationId: row.id,
    traceparent: row.traceparent ?? undefined,
  };
}

/**
 * Applies `event` to the stored operation, setting the result, the error or the decision beside the status, or
 * throws `invalid_state` (or `not_found`) and changes nothing of the operation. Each move is recorded in the
 * activity log with it, in its statement when the caller holds the operation (`{ held: row }`): an entry reads
 * only what no move changes (the operation's kind, person, client, agent, space, input and trace) besides the
 * move's own status, error and decision. `told`: entries of what led to the move (a connector's call, a delivery's
 * attempt), recorded before the move's own whatever the move comes to.
 */
export const { move } = stateTable({
  table: operations,
  transitions: OPERATION_TRANSITIONS,
  stamp: ({ to }) => ({
    updatedAt: sql`greatest(now(), ${operations.createdAt})`,
    ...(to !== null && SETTLED_STATUSES.includes(to) ? { finishedAt: sql`now()` } : {}),
  }),
  refusal: ({ status }, event) =>
    orgErrors.invalidState(`the operation is ${status}, so it ${event === 'progress' ? 'takes no more progress' : `cannot ${event}`}`, { status, event }),
  notFound: () => orgErrors.notFound('operation'),
  movedWrites: (row, event, when, told: NewActivity[] | undefined) => {
    const kind = MOVE_ACTIVITY[event];
    return [
      ...(kind || told?.length ? [activityStatement({ entries: told ?? [] }, { entries: kind ? [operationActivity(row, kind)] : [], where: when })] : []),
      ...(row.status === 'failed' ? [announceStatement('operation.failed', { operation_id: row.id }, when)] : []),
    ];
  },
});
