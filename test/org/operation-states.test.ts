/** DESIGN 4.4's operation state machine, as the table every move obeys. */
import { describe, expect, it } from 'vitest';
import { isAnswered, nextStatus, OPERATION_STATUSES, OPERATION_TRANSITIONS, type OperationEvent, type OperationStatus } from '../../src/org/operations/states.js';

/** Every (status, event) pair and what DESIGN 4.4 says happens: the new status, or a refusal. */
const EXPECTED: Record<OperationStatus, Partial<Record<OperationEvent, OperationStatus>>> = {
  queued: { start: 'running', fail: 'failed', cancel: 'cancelled' },
  running: { pause: 'paused', succeed: 'succeeded', fail: 'failed', cancel: 'cancelled' },
  paused: { resume: 'running', fail: 'failed', cancel: 'cancelled' },
  succeeded: {},
  failed: {},
  cancelled: {},
};

const cases = OPERATION_STATUSES.flatMap((status) =>
  (Object.keys(OPERATION_TRANSITIONS) as OperationEvent[]).map((event) => [status, event, EXPECTED[status][event] ?? 'refused'] as const),
);

describe('operation states', () => {
  it.each(cases)('%s --%s--> %s', (status, event, expected) => {
    if (expected === 'refused') {
      expect(() => nextStatus(status, event)).toThrow(expect.objectContaining({ code: 'invalid_state', status: 409 }));
      expect(() => nextStatus(status, event)).toThrow(`the operation is ${status}`);
    } else {
      expect(nextStatus(status, event)).toBe(expected);
    }
  });

  it('stops a waiting caller at a pause or an end, not while the work is queued or running', () => {
    expect(OPERATION_STATUSES.filter(isAnswered)).toEqual(['paused', 'succeeded', 'failed', 'cancelled']);
  });
});
