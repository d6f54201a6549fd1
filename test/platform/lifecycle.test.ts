/**
 * A service's shutdown always finishes (lifecycle.ts `closeInOrder`): a step that fails or hangs is logged by
 * name, with its state, and the steps after it still run.
 */
import { describe, expect, it } from 'vitest';
import { closeInOrder } from '../../src/platform/lifecycle.js';

function recorder() {
  const errors: Array<{ details: object; message: string }> = [];
  return { errors, log: { error: (details: object, message: string) => void errors.push({ details, message }) } };
}

describe('closeInOrder', () => {
  it('runs every step in order and logs nothing when each finishes', async () => {
    const { errors, log } = recorder();
    const ran: string[] = [];
    await closeInOrder(log, [
      { name: 'first', run: async () => void ran.push('first') },
      { name: 'second', run: () => void ran.push('second') },
    ]);
    expect(ran).toEqual(['first', 'second']);
    expect(errors).toEqual([]);
  });

  it('goes on past a step that hangs, naming it with its state, and past one that fails', async () => {
    const { errors, log } = recorder();
    const ran: string[] = [];
    const started = Date.now();
    await closeInOrder(
      log,
      [
        { name: 'the stuck part', run: () => new Promise(() => {}), patienceMs: 200, state: () => ({ pool: { total: 3, idle: 1, waiting: 0 } }) },
        { name: 'the broken part', run: () => Promise.reject(new Error('it broke')) },
        { name: 'the database', run: () => void ran.push('the database') },
      ],
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(ran).toEqual(['the database']);
    expect(errors.map((logged) => logged.message)).toEqual([
      'shutdown: the stuck part has not finished; going on without it',
      'shutdown: the broken part failed; going on',
    ]);
    expect(errors[0].details).toEqual({ step: 'the stuck part', patienceMs: 200, pool: { total: 3, idle: 1, waiting: 0 } });
    expect((errors[1].details as { err: Error }).err.message).toBe('it broke');
  });
});
