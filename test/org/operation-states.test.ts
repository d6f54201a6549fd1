/** DESIGN 4.4's operation state machine, as the table every move obeys: each case moves a stored operation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Db } from '../../src/platform/database.js';
import { isAnswered, move, OPERATION_STATUSES, OPERATION_TRANSITIONS, type OperationEvent, type OperationStatus } from '../../src/org/operations/states.js';
import { operations, people } from '../../src/org/schema.js';
import { openOrgDatabase } from '../helpers/org.js';

/** Every (status, event) pair and what DESIGN 4.4 says happens: the new status, or a refusal. */
const EXPECTED: Record<OperationStatus, Partial<Record<OperationEvent, OperationStatus>>> = {
  queued: { start: 'running', fail: 'failed', cancel: 'cancelled', progress: 'queued' },
  running: { pause: 'paused', succeed: 'succeeded', fail: 'failed', cancel: 'cancelled', progress: 'running' },
  paused: { resume: 'running', fail: 'failed', cancel: 'cancelled', progress: 'paused' },
  succeeded: {},
  failed: {},
  cancelled: {},
};

const cases = OPERATION_STATUSES.flatMap((status) =>
  (Object.keys(OPERATION_TRANSITIONS) as OperationEvent[]).map((event) => [status, event, EXPECTED[status][event] ?? 'refused'] as const),
);

describe('operation states', () => {
  let org: Awaited<ReturnType<typeof openOrgDatabase>>;
  let db: Db;
  let count = 0;
  beforeAll(async () => {
    org = await openOrgDatabase('pglite');
    db = org.database.db;
    await db.insert(people).values({ id: 'p_states', email: 'states@example.com', name: 'States', role: 'member' });
  });
  afterAll(() => org.close());

  /** A stored operation in `status`. */
  async function operationIn(status: OperationStatus): Promise<string> {
    const id = `op_states_${++count}`;
    await db.insert(operations).values({ id, kind: 'ask', status, personId: 'p_states', input: {} });
    return id;
  }

  it.each(cases)('%s --%s--> %s', async (status, event, expected) => {
    const id = await operationIn(status);
    if (expected === 'refused') {
      const refusal = move(db, id, event);
      await expect(refusal).rejects.toMatchObject({ code: 'invalid_state', status: 409, message: expect.stringContaining(`the operation is ${status}`) });
      const [stored] = await db.select({ status: operations.status }).from(operations).where(eq(operations.id, id));
      expect(stored.status).toBe(status);
    } else {
      const moved = await move(db, id, event);
      expect(moved.status).toBe(expected);
      expect(moved.finishedAt !== null).toBe(['succeeded', 'failed', 'cancelled'].includes(expected));
    }
  });

  it('refuses to move an operation that does not exist with not_found', async () => {
    await expect(move(db, 'op_missing', 'start')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('stops a waiting caller at a pause or an end, not while the work is queued or running', () => {
    expect(OPERATION_STATUSES.filter(isAnswered)).toEqual(['paused', 'succeeded', 'failed', 'cancelled']);
  });
});
