import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/platform/database.js';
import { countAttempt, deletePassedWindows, resetAttempts } from '../../src/platform/rate-limit.js';
import { rateLimits } from '../../src/platform/schema.js';
import { engines, testDatabase, type TestDatabase } from '../helpers/databases.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(engines)('rate-limit counters on %s', (engine) => {
  let scratch: TestDatabase;
  let database: Database;
  beforeAll(async () => {
    scratch = testDatabase(engine);
    database = await openDatabase(scratch.config);
  });
  afterAll(async () => {
    await database.close();
    await scratch.drop();
  });

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
    await pause(1100);
    expect((await countAttempt(database.db, 'k3', limit)).allowed).toBe(true);
  });

  it('forgets a key when reset', async () => {
    const limit = { limit: 1, windowSeconds: 60 };
    await countAttempt(database.db, 'k4', limit);
    await resetAttempts(database.db, 'k4');
    expect((await countAttempt(database.db, 'k4', limit)).allowed).toBe(true);
  });

  it('deletes only the counters whose window has passed', async () => {
    await countAttempt(database.db, 'short', { limit: 5, windowSeconds: 1 });
    await countAttempt(database.db, 'long', { limit: 5, windowSeconds: 3600 });
    await pause(1100);
    expect(await deletePassedWindows(database.db)).toBeGreaterThanOrEqual(1);
    const keys = (await database.db.select({ key: rateLimits.key }).from(rateLimits)).map((row) => row.key);
    expect(keys).not.toContain('short');
    expect(keys).toContain('long');
  });
});
