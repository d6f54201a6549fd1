import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countAttempt, resetAttempts } from '../../src/org/rate-limit.js';
import type { Database } from '../../src/platform/database.js';
import { engines } from '../helpers/databases.js';
import { openOrgDatabase } from '../helpers/org.js';

describe.each(engines)('rate-limit counters on %s', (engine) => {
  let database: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ database, close } = await openOrgDatabase(engine));
  });
  afterAll(() => close());

  it('allows up to the limit in a window, then refuses with the seconds left', async () => {
    const limit = { limit: 3, windowSeconds: 60 };
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await countAttempt(database.db, 'k1', limit));
    expect(outcomes.map((outcome) => outcome.allowed)).toEqual([true, true, true, false]);
    expect(outcomes[3].retryAfter).toBeGreaterThan(0);
    expect(outcomes[3].retryAfter).toBeLessThanOrEqual(60);
  });

  it('counts concurrent attempts exactly', async () => {
    const limit = { limit: 10, windowSeconds: 60 };
    const outcomes = await Promise.all(Array.from({ length: 25 }, () => countAttempt(database.db, 'k2', limit)));
    expect(outcomes.filter((outcome) => outcome.allowed)).toHaveLength(10);
  });

  it('starts a new window once the old one has passed', async () => {
    const limit = { limit: 1, windowSeconds: 1 };
    expect((await countAttempt(database.db, 'k3', limit)).allowed).toBe(true);
    expect((await countAttempt(database.db, 'k3', limit)).allowed).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await countAttempt(database.db, 'k3', limit)).allowed).toBe(true);
  });

  it('forgets a key when reset', async () => {
    const limit = { limit: 1, windowSeconds: 60 };
    await countAttempt(database.db, 'k4', limit);
    await resetAttempts(database.db, 'k4');
    expect((await countAttempt(database.db, 'k4', limit)).allowed).toBe(true);
  });
});
