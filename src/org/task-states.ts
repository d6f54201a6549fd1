/**
 * DESIGN 4.1 and 4.5: a task is `open | in_progress | waiting | done | cancelled`. "For a task delivery,
 * /complete marks the task done, /fail puts it back to open with the error as a progress event, and /questions
 * moves it to waiting until every open question is answered."
 *
 * The table is the whole state machine: `moveTask()` applies an event with one conditional UPDATE whose
 * `WHERE status IN (…)` comes from the table, so two writers racing on one task cannot both win, and a refusal
 * names the status the task is really in. Events whose `to` is null change no status but are refused in the
 * same way where the table does not list the current one (no answers or progress on a finished task).
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Queryable } from '../platform/database.js';
import { orgErrors } from './errors.js';
import { tasks } from './schema.js';

export const TASK_STATUSES = ['open', 'in_progress', 'waiting', 'done', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Statuses in which the task still has work to do. */
const UNFINISHED = ['open', 'in_progress', 'waiting'] as const satisfies readonly TaskStatus[];

interface TaskTransition {
  readonly from: readonly TaskStatus[];
  /** The new status; null when the event leaves it as it is. */
  readonly to: TaskStatus | null;
  /** How a refusal says what could not happen: "the task is done, so it cannot …". */
  readonly refused: string;
}

export const TASK_TRANSITIONS = {
  /** Its agent took the task up (the task was delivered). */
  start: { from: ['open'], to: 'in_progress', refused: 'be started' },
  /** Its agent asked a question: the task waits until every open question is answered. */
  ask: { from: UNFINISHED, to: 'waiting', refused: 'take questions' },
  /** A person answered a question; the status stays until the last open one is answered. */
  answer: { from: UNFINISHED, to: null, refused: 'take answers' },
  /** Every open question is answered: the agent carries on. */
  resume: { from: ['waiting'], to: 'in_progress', refused: 'resume' },
  /** Its agent reported progress. */
  progress: { from: UNFINISHED, to: null, refused: 'take progress' },
  complete: { from: UNFINISHED, to: 'done', refused: 'be completed' },
  /** Its agent failed: the task is open again, the error recorded as a progress event. */
  reopen: { from: UNFINISHED, to: 'open', refused: 'be reopened' },
  /**
   * A scheduled run is due. A finished run of a recurring task is opened again; a task still in progress or
   * waiting on a person is refused, so the run is skipped rather than delivered on top of the last one.
   */
  run: { from: ['open', 'done'], to: 'open', refused: 'start another run' },
  cancel: { from: UNFINISHED, to: 'cancelled', refused: 'be cancelled' },
} as const satisfies Record<string, TaskTransition>;

export type TaskEvent = keyof typeof TASK_TRANSITIONS;

/** The status after `event` (unchanged for events without a `to`), or the `invalid_state` refusal. Pure. */
export function nextTaskStatus(current: TaskStatus, event: TaskEvent): TaskStatus {
  const transition: TaskTransition = TASK_TRANSITIONS[event];
  if (!transition.from.includes(current)) throw taskRefusal(current, event);
  return transition.to ?? current;
}

export type TaskRow = typeof tasks.$inferSelect;

/** Columns an event may set beside the status. */
export type TaskChanges = Partial<Pick<TaskRow, 'result' | 'nextRunAt'>>;

/** Applies `event` to the stored task, or throws `invalid_state` (or `not_found`) and changes nothing. */
export async function moveTask(db: Queryable, id: string, event: TaskEvent, changes: TaskChanges = {}): Promise<TaskRow> {
  const transition: TaskTransition = TASK_TRANSITIONS[event];
  const [row] = await db
    .update(tasks)
    .set({
      ...changes,
      ...(transition.to ? { status: transition.to } : {}),
      updatedAt: sql`greatest(now(), ${tasks.createdAt})`,
    })
    .where(and(eq(tasks.id, id), inArray(tasks.status, [...transition.from])))
    .returning();
  if (row) return row;
  const [current] = await db.select({ status: tasks.status }).from(tasks).where(eq(tasks.id, id));
  if (!current) throw orgErrors.notFound('task');
  throw taskRefusal(current.status, event);
}

function taskRefusal(current: TaskStatus, event: TaskEvent) {
  const transition: TaskTransition = TASK_TRANSITIONS[event];
  return orgErrors.invalidState(`the task is ${current}, so it cannot ${transition.refused}`, { status: current, event });
}
