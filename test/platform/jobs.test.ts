import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, queryRows, type Database } from '../../src/platform/database.js';
import { enqueueJob, startJobWorker, type JobWorker } from '../../src/platform/jobs.js';
import { engines, testDatabase, waitingBehind, type TestDatabase } from '../helpers/databases.js';

const silent = { info() {}, warn() {}, error() {}, debug() {}, fatal() {}, trace() {}, child() { return silent; }, level: 'silent' } as never;

describe.each(engines)('job queue on %s', (engine) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function open(): Promise<{ database: Database; scratch: TestDatabase }> {
    const scratch = testDatabase(engine);
    const database = await openDatabase(scratch.config);
    cleanups.push(async () => {
      await database.close();
      await scratch.drop();
    });
    return { database, scratch };
  }

  function worker(database: Database, handlers: Parameters<typeof startJobWorker>[1]['handlers']): JobWorker {
    const started = startJobWorker(database, { handlers, log: silent, pollMs: 60_000 });
    cleanups.push(() => started.stop());
    return started;
  }

  it('runs each job exactly once even with two workers claiming at once', async () => {
    const { database, scratch } = await open();
    const runs: number[] = [];
    for (let n = 0; n < 40; n++) await enqueueJob(database.db, 'count', { n });

    // A second connection pool on the same database stands in for a second process.
    const other = engine === 'postgres' ? await openDatabase(scratch.config) : database;
    if (other !== database) cleanups.push(() => other.close());
    const handler = { count: async (payload: Record<string, unknown>) => void runs.push(payload.n as number) };
    await Promise.all([worker(database, handler).runDue(), worker(other, handler).runDue()]);

    expect(runs.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, n) => n));
    const left = await database.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM jobs`);
    expect(left[0].n).toBe(0);
  });

  it('renews the lease while a slow handler runs: a second worker never runs the job at the same time', { timeout: 30_000 }, async () => {
    const { database, scratch } = await open();
    await enqueueJob(database.db, 'slow', {});
    const other = engine === 'postgres' ? await openDatabase(scratch.config) : database;
    if (other !== database) cleanups.push(() => other.close());
    const runs: Array<{ by: string; lost: boolean }> = [];
    const slow = (by: string) => ({
      slow: async (_payload: Record<string, unknown>, job: { lost: AbortSignal }) => {
        const run = { by, lost: false };
        runs.push(run);
        // Three leases long: without renewal the second worker would claim it after one.
        await new Promise((resolve) => setTimeout(resolve, 3_200));
        run.lost = job.lost.aborted;
      },
    });
    const first = startJobWorker(database, { handlers: slow('first'), log: silent, pollMs: 60_000, leaseSeconds: 1 });
    const second = startJobWorker(other, { handlers: slow('second'), log: silent, pollMs: 60_000, leaseSeconds: 1 });
    cleanups.push(() => first.stop(), () => second.stop());
    const running = first.runDue();
    for (let index = 0; index < 6; index += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      await second.runDue();
    }
    await running;
    expect(runs).toEqual([{ by: 'first', lost: false }]);
    expect((await database.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM jobs`))[0].n).toBe(0);
  });

  it('a run whose lease was lost cannot finish or delete the newer claim of its job', { timeout: 30_000 }, async () => {
    const { database } = await open();
    await enqueueJob(database.db, 'stale', {}, { key: 'stale-job' });
    let signal: AbortSignal | undefined;
    const started = startJobWorker(database, {
      handlers: {
        stale: async (_payload, job) => {
          signal = job.lost;
          // Another process claims the job meanwhile (as after this one lost the database for a whole lease).
          await database.db.execute(sql`UPDATE jobs SET attempts = attempts + 1, locked_until = now() + interval '1 minute' WHERE key = 'stale-job'`);
          await new Promise((resolve) => setTimeout(resolve, 1_500));
        },
      },
      log: silent,
      pollMs: 60_000,
      leaseSeconds: 1,
    });
    cleanups.push(() => started.stop());
    await started.runDue();
    expect(signal?.aborted).toBe(true);
    // The newer claim's row is still there, for the claim that holds it.
    expect(await database.rows<{ attempts: number }>(sql`SELECT attempts FROM jobs WHERE key = 'stale-job'`)).toEqual([{ attempts: 2 }]);
  });

  it('retries a failing job later and keeps its error', async () => {
    const { database } = await open();
    await enqueueJob(database.db, 'flaky', {}, { maxAttempts: 2 });
    let calls = 0;
    const flaky = worker(database, {
      flaky: async () => {
        calls += 1;
        throw new Error('receiver down');
      },
    });
    await flaky.runDue();
    expect(calls).toBe(1);
    const [job] = await database.rows<{ attempts: number; last_error: string; failed_at: string | null }>(
      sql`SELECT attempts, last_error, failed_at FROM jobs`,
    );
    expect(job).toMatchObject({ attempts: 1, last_error: 'receiver down', failed_at: null });

    await database.db.execute(sql`UPDATE jobs SET run_at = now()`);
    await flaky.runDue();
    const [failed] = await database.rows<{ failed_at: string | null }>(sql`SELECT failed_at FROM jobs`);
    expect(calls).toBe(2);
    expect(failed.failed_at).not.toBeNull();
  });

  // The window between a drain's last (empty) claim and its end is held open on PostgreSQL by locking the row its
  // closing delete of finished jobs must take; PGlite's one connection cannot hold it apart from the worker's. When
  // that last claim takes longer than the 50 ms after which finished jobs are deleted anyway, the delete held is the
  // timer's and the drain has ended: the test then passes either way (without the fix it failed two runs in three).
  // tasks.test.ts's one-shot run failed so in CI: its settle() returned with the run's job still queued.
  it.runIf(engine === 'postgres')('a call during a drain runs a job committed after that drain\'s last claim', async () => {
    const { database } = await open();
    const ran: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const w = worker(database, {
      step: async (payload) => {
        ran.push(payload.n as string);
        if (payload.n === 'a') await held;
      },
    });
    await enqueueJob(database.db, 'step', { n: 'a' });
    const draining = w.runDue();
    await expect.poll(() => ran, { timeout: 10_000 }).toEqual(['a']);
    let during: Promise<number> | undefined;
    await database.db.transaction(async (tx) => {
      const [{ pid }] = await queryRows<{ pid: number }>(tx, sql`SELECT pg_backend_pid() AS pid FROM jobs WHERE payload->>'n' = 'a' FOR UPDATE`);
      release();
      // The drain found nothing more and waits to delete 'a'.
      await expect.poll(async () => (await database.rows<{ n: number }>(waitingBehind(pid)))[0].n, { timeout: 10_000 }).toBe(1);
      await enqueueJob(database.db, 'step', { n: 'b' });
      during = w.runDue();
    });
    await during;
    expect(ran).toEqual(['a', 'b']);
    await draining;
  });

  it('does not run a job before its time', async () => {
    const { database } = await open();
    await enqueueJob(database.db, 'later', {}, { runAt: new Date(Date.now() + 60_000) });
    let ran = false;
    await worker(database, { later: async () => void (ran = true) }).runDue();
    expect(ran).toBe(false);
  });

  it('keeps one pending job per key: `replace` moves its time and payload, `keep` leaves it and starts again only one that failed for good', async () => {
    const { database } = await open();
    const stored = () => database.rows<{ payload: { n: number }; later: boolean; failed: boolean; attempts: number }>(
      sql`SELECT payload, run_at > now() + interval '30 seconds' AS later, failed_at IS NOT NULL AS failed, attempts FROM jobs WHERE key = 'k'`,
    );
    await enqueueJob(database.db, 'keyed', { n: 1 }, { key: 'k', runAt: new Date(Date.now() + 60_000) });
    await enqueueJob(database.db, 'keyed', { n: 2 }, { key: 'k' });
    expect(await stored()).toEqual([{ payload: { n: 2 }, later: false, failed: false, attempts: 0 }]);

    await enqueueJob(database.db, 'keyed', { n: 3 }, { key: 'k', ifPending: 'keep', runAt: new Date(Date.now() + 60_000) });
    expect(await stored()).toEqual([{ payload: { n: 2 }, later: false, failed: false, attempts: 0 }]);
    await database.db.execute(sql`UPDATE jobs SET failed_at = now(), attempts = 5 WHERE key = 'k'`);
    await enqueueJob(database.db, 'keyed', { n: 4 }, { key: 'k', ifPending: 'keep', runAt: new Date(Date.now() + 60_000) });
    expect(await stored()).toEqual([{ payload: { n: 4 }, later: true, failed: false, attempts: 0 }]);
  });
});
