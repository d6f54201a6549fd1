/** DESIGN 4.1 and 4.5's task statuses, as the table every move of a task obeys (src/org/task-states.ts). */
import { describe, expect, it } from 'vitest';
import { nextTaskStatus, TASK_STATUSES, TASK_TRANSITIONS, type TaskEvent, type TaskStatus } from '../../src/org/task-states.js';

/** Every (status, event) pair and what happens: the status after it, or a refusal. */
const EXPECTED: Record<TaskStatus, Partial<Record<TaskEvent, TaskStatus>>> = {
  open: { start: 'in_progress', ask: 'waiting', answer: 'open', progress: 'open', complete: 'done', reopen: 'open', run: 'open', cancel: 'cancelled' },
  in_progress: { ask: 'waiting', answer: 'in_progress', progress: 'in_progress', complete: 'done', reopen: 'open', cancel: 'cancelled' },
  waiting: { ask: 'waiting', answer: 'waiting', resume: 'in_progress', progress: 'waiting', complete: 'done', reopen: 'open', cancel: 'cancelled' },
  // A recurring task's next run opens a done task again; nothing else moves a finished task.
  done: { run: 'open' },
  cancelled: {},
};

const cases = TASK_STATUSES.flatMap((status) =>
  (Object.keys(TASK_TRANSITIONS) as TaskEvent[]).map((event) => [status, event, EXPECTED[status][event] ?? 'refused'] as const),
);

describe('task states', () => {
  it.each(cases)('%s --%s--> %s', (status, event, expected) => {
    if (expected === 'refused') {
      expect(() => nextTaskStatus(status, event)).toThrow(expect.objectContaining({ code: 'invalid_state', status: 409, details: { status, event } }));
      expect(() => nextTaskStatus(status, event)).toThrow(`the task is ${status}, so it cannot`);
    } else {
      expect(nextTaskStatus(status, event)).toBe(expected);
    }
  });
});
