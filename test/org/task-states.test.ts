/** DESIGN 4.1 and 4.5's task statuses, as the table every move of a task obeys: each case moves a stored task. */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/platform/database.js';
import { people, spaces, tasks } from '../../src/org/schema.js';
import { moveTask, TASK_STATUSES, TASK_TRANSITIONS, type TaskEvent, type TaskStatus } from '../../src/org/tasks/states.js';
import { openOrgDatabase } from '../helpers/org.js';

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
  let org: Awaited<ReturnType<typeof openOrgDatabase>>;
  let db: Db;
  let count = 0;
  beforeAll(async () => {
    org = await openOrgDatabase('pglite');
    db = org.database.db;
    await db.insert(people).values({ id: 'p_states', email: 'states@example.com', name: 'States', role: 'member' });
    await db.insert(spaces).values({ id: 'sp_states', key: 'states', name: 'States' });
  });
  afterAll(() => org.close());

  /** A stored task in `status`. */
  async function taskIn(status: TaskStatus): Promise<string> {
    const id = `task_states_${++count}`;
    await db.insert(tasks).values({ id, spaceId: 'sp_states', title: 'A task', status, createdByType: 'person', createdById: 'p_states', personId: 'p_states' });
    return id;
  }

  it.each(cases)('%s --%s--> %s', async (status, event, expected) => {
    const id = await taskIn(status);
    if (expected === 'refused') {
      await expect(moveTask(db, id, event)).rejects.toMatchObject({
        code: 'invalid_state',
        status: 409,
        details: { status, event },
        message: expect.stringContaining(`the task is ${status}, so it cannot`),
      });
      const [stored] = await db.select({ status: tasks.status }).from(tasks).where(eq(tasks.id, id));
      expect(stored.status).toBe(status);
    } else {
      expect((await moveTask(db, id, event)).status).toBe(expected);
    }
  });

  it('refuses to move a task that does not exist with not_found', async () => {
    await expect(moveTask(db, 'task_missing', 'start')).rejects.toMatchObject({ code: 'not_found' });
  });
});
