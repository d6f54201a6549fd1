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
import { sql } from 'drizzle-orm';
import { stateTable, type Transition } from '../../platform/state-table.js';
import { orgErrors } from '../errors.js';
import { tasks } from '../schema.js';

export const TASK_STATUSES = ['open', 'in_progress', 'waiting', 'done', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Statuses in which the task still has work to do. */
const UNFINISHED = ['open', 'in_progress', 'waiting'] as const satisfies readonly TaskStatus[];

interface TaskTransition extends Transition<TaskStatus> {
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

export type TaskRow = typeof tasks.$inferSelect;

/** Whether the table lets `event` move a task in `status`: what a page offers is what `moveTask` would accept. */
export function taskAllows(status: TaskStatus, event: TaskEvent): boolean {
  return (TASK_TRANSITIONS[event].from as readonly TaskStatus[]).includes(status);
}

/** Applies `event` to the stored task, or throws `invalid_state` (or `not_found`) and changes nothing. */
export const { move: moveTask } = stateTable({
  table: tasks,
  transitions: TASK_TRANSITIONS,
  stamp: () => ({ updatedAt: sql`greatest(now(), ${tasks.createdAt})` }),
  refusal: ({ status }, event) => {
    const transition: TaskTransition = TASK_TRANSITIONS[event];
    return orgErrors.invalidState(`the task is ${status}, so it cannot ${transition.refused}`, { status, event });
  },
  notFound: () => orgErrors.notFound('task'),
});
