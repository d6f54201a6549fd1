/**
 * The durable job queue (DESIGN section 7): enqueue inside the caller's transaction, claim with
 * `FOR UPDATE SKIP LOCKED` and a lease, retry with backoff, keep failures for inspection.
 *
 * A claim's lease is renewed while its handler runs (every third of a lease), so a handler slower than the lease
 * is never run twice at once; only a process that died (or lost the database for a whole lease) lets its jobs
 * run again. Every write a run makes to its job row is fenced by the claim's attempt number, so a run whose
 * lease was lost cannot finish, fail or delete a newer claim of the same job. Handlers must still be idempotent:
 * a job whose process died mid-run runs again.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { queryRows, type Database, type Queryable } from './database.js';
import { fixedStatement, type FixedStatement, type Slots } from './fixed-statement.js';
import { outageReporter } from './database-outage.js';
import { jobs } from './schema.js';

export interface JobInfo {
  id: number;
  /** This claim's attempt number: the claim's fence (a later claim of the job counts one more). */
  attempts: number;
  /** True on the last attempt the queue will make: a handler may then record the failure where people see it. */
  lastAttempt: boolean;
  /**
   * Aborted when this process could not renew the lease (the database was unreachable for a whole lease, or
   * another claim took the job): another process may be running the job now, so a handler should stop.
   */
  lost: AbortSignal;
  /**
   * What the process that enqueued the job handed over with it (`enqueueHere`: the row it has just written), on
   * the run claimed as it was enqueued; absent on any other run, which reads what it needs.
   */
  handedOver?: unknown;
}

export type JobHandler<Payload = Record<string, unknown>, Handover = unknown> = (payload: Payload, job: JobInfo & { handedOver?: Handover }) => Promise<void>;

/**
 * A job kind with the payload its handler receives, so what is enqueued and what is handled are checked
 * against one type: `const deliver = jobKind<{ operation_id: string }>('org.deliver')`, then
 * `deliver.enqueue(tx, { operation_id })` and `handlers: { ...deliver.handle(async (payload) => …) }`.
 */
export interface JobKind<Payload extends Record<string, unknown>, Handover = never> {
  readonly kind: string;
  enqueue(db: Queryable, payload: Payload, options?: EnqueueOptions): Promise<void>;
  /** `worker.enqueueHere` for this kind; `handover` reaches its run here as `job.handedOver`. */
  enqueueHere(worker: JobWorker, db: Queryable, payload: Payload, alongside?: SQL[], handover?: Handover): Promise<ClaimedHere>;
  handle(handler: JobHandler<Payload, Handover>): Record<string, JobHandler>;
}

export function jobKind<Payload extends Record<string, unknown>, Handover = never>(kind: string): JobKind<Payload, Handover> {
  return {
    kind,
    enqueue: (db, payload, options) => enqueueJob(db, kind, payload, options),
    enqueueHere: (worker, db, payload, alongside, handover) => worker.enqueueHere(db, kind, payload, alongside, handover),
    handle: (handler) => ({ [kind]: handler as JobHandler }),
  };
}

export interface EnqueueOptions {
  /** When to run; default now. */
  runAt?: Date | string;
  /** At most one pending job per key; what happens to a pending one is `ifPending`'s choice. */
  key?: string;
  /**
   * With `key`, when a job with that key is pending: `replace` (default) updates its time and payload;
   * `keep` leaves it as it is and only starts again one that failed for good (a periodic job ensured at every
   * start keeps its schedule).
   */
  ifPending?: 'replace' | 'keep';
  maxAttempts?: number;
  /**
   * `enqueueJob` only: writes (INSERTs, UPDATEs or DELETEs, not WITHs) made in the same statement, so the job
   * and what it is for are stored together in one round trip.
   */
  alongside?: SQL[];
}

export async function enqueueJob(
  db: Queryable,
  kind: string,
  payload: Record<string, unknown>,
  options: EnqueueOptions = {},
): Promise<void> {
  const statement = enqueueJobStatement(kind, payload, options);
  await db.execute(withAlongside(options.alongside, statement));
}

/** `statement` with `alongside`'s writes before it, as CTEs of the same statement. */
function withAlongside(alongside: SQL[] | undefined, statement: SQL): SQL {
  if (!alongside?.length) return statement;
  return sql`WITH ${sql.join(alongside.map((write, i) => sql`${sql.raw(`alongside_${i}`)} AS (${write})`), sql`, `)} ${statement}`;
}

/**
 * `enqueueJob`'s statement, to embed in a larger one: with `from` (`FROM delivery`, a CTE of the same statement)
 * it queues the job once per row of it, so a job is queued together with what it is for, in one round trip.
 */
export function enqueueJobStatement(kind: string, payload: Record<string, unknown>, options: EnqueueOptions = {}, from?: SQL): SQL {
  const values: JobValues = {
    kind,
    payload: JSON.stringify(payload),
    runAt: options.runAt ? new Date(options.runAt).toISOString() : null,
    key: options.key ?? null,
    maxAttempts: options.maxAttempts ?? 5,
  };
  const conflict: OnConflict = !options.key ? 'none' : (options.ifPending ?? 'replace');
  // Without `from`, the statement is one of three shapes, each rendered once (fixed-statement.ts): enqueues are
  // among the most frequent writes (every operation's start, every delivery's next attempt).
  return from ? jobInsert(values, conflict, from) : enqueueShapes[conflict].bind(values);
}

interface JobValues {
  kind: string;
  /** The payload as JSON. */
  payload: string;
  /** ISO time; null for now. */
  runAt: string | null;
  key: string | null;
  maxAttempts: number;
}

type OnConflict = 'none' | 'replace' | 'keep';

/** The INSERT of a job, its values given or placeholders (`Slots`) for a fixed statement. */
function jobInsert(values: JobValues | Slots<JobValues>, conflict: OnConflict, from: SQL = sql``): SQL {
  const insert = sql`INSERT INTO ${jobs} (kind, payload, run_at, key, max_attempts)
    SELECT ${values.kind}::text, ${values.payload}::jsonb, coalesce(${values.runAt}::timestamptz, now()), ${values.key}::text, ${values.maxAttempts}::int ${from}`;
  if (conflict === 'none') return insert;
  // `keep` leaves a pending job as it is and only starts again one that failed for good.
  const onlyFailed = conflict === 'keep' ? sql` WHERE ${jobs}.failed_at IS NOT NULL` : sql``;
  return sql`${insert} ON CONFLICT (key) DO UPDATE SET kind = excluded.kind, payload = excluded.payload, run_at = excluded.run_at,
    attempts = 0, failed_at = NULL, last_error = NULL, locked_until = NULL${onlyFailed}`;
}

const enqueueShapes: Record<OnConflict, FixedStatement<JobValues>> = {
  none: fixedStatement((slot) => jobInsert(slot, 'none')),
  replace: fixedStatement((slot) => jobInsert(slot, 'replace')),
  keep: fixedStatement((slot) => jobInsert(slot, 'keep')),
};

/** A job enqueued already claimed by this process (`enqueueHere`), for one lease. */
const claimedInsert = fixedStatement<{ kind: string; payload: string; leaseSeconds: number }>(
  (slot) => sql`INSERT INTO ${jobs} (kind, payload, attempts, locked_until)
    VALUES (${slot.kind}, ${slot.payload}::jsonb, 1, now() + make_interval(secs => ${slot.leaseSeconds}::int))
    RETURNING id, kind, key, payload, attempts, max_attempts`,
);

export async function cancelJob(db: Queryable, key: string): Promise<void> {
  await db.delete(jobs).where(sql`${jobs.key} = ${key}`);
}

interface ClaimedJob extends Record<string, unknown> {
  id: number | string;
  kind: string;
  key: string | null;
  payload: Record<string, unknown>;
  attempts: number;
  max_attempts: number;
}

export interface JobWorkerOptions {
  handlers: Record<string, JobHandler>;
  log: FastifyBaseLogger;
  /** How often to look for due jobs; default 500 ms. */
  pollMs?: number;
  /** How long a claimed job stays invisible to other workers; default 60 s. */
  leaseSeconds?: number;
  batchSize?: number;
}

export interface JobWorker {
  /**
   * Enqueues a job in `db` (the caller's transaction) already claimed by this process for one lease: no
   * worker is woken and none takes it. Once the transaction has committed, `run()` runs it here; if this
   * process dies first (or never calls it), the lease passes and any worker runs it, as after a crash mid-run.
   */
  enqueueHere(db: Queryable, kind: string, payload: Record<string, unknown>, alongside?: SQL[], handover?: unknown): Promise<ClaimedHere>;
  /** Look for due jobs now instead of at the next poll. */
  wake(): void;
  /** Claims and runs every job due when called; resolves when they are done (a call during a drain waits for the drain after it). */
  runDue(): Promise<number>;
  stop(): Promise<void>;
}

/** A job this process claimed as it enqueued it (`enqueueHere`). */
export interface ClaimedHere {
  /** Runs it; resolves when it is done, never rejects (a failure is handled as any run's: retried with backoff). */
  run(): Promise<void>;
}

/** How long finished jobs wait to be deleted together. */
const FINISHED_FLUSH_MS = 50;

/**
 * How long a stopping service waits for the jobs its worker is running before closing the rest without them
 * (lifecycle.ts `closeInOrder`): an outbound attempt is bounded by its own timeout, 10 s by default. A job cut off
 * keeps its lease and runs again once the lease has passed, on this process's next start or another process.
 */
export const JOB_DRAIN_MS = 30_000;

export function startJobWorker(database: Database, options: JobWorkerOptions): JobWorker {
  const { handlers, log } = options;
  const pollMs = options.pollMs ?? 500;
  const leaseSeconds = options.leaseSeconds ?? 60;
  const batchSize = options.batchSize ?? 10;
  const kinds = Object.keys(handlers);
  let stopped = false;
  let running: Promise<number> | null = null;
  /** Jobs run by `enqueueHere`'s callers, which `stop()` waits for too. */
  const runningHere = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  const outage = outageReporter(log, 'job worker');

  async function claim(): Promise<ClaimedJob[]> {
    if (kinds.length === 0) return [];
    return database.rows<ClaimedJob>(sql`
      UPDATE jobs SET locked_until = now() + make_interval(secs => ${leaseSeconds}), attempts = attempts + 1
      WHERE id IN (
        SELECT id FROM jobs
        WHERE failed_at IS NULL AND run_at <= now() AND (locked_until IS NULL OR locked_until < now())
          AND kind IN (${sql.join(kinds.map((kind) => sql`${kind}`), sql`, `)})
        ORDER BY run_at
        LIMIT ${batchSize}
        FOR UPDATE SKIP LOCKED)
      RETURNING id, kind, key, payload, attempts, max_attempts`);
  }

  /**
   * Finished jobs without a key, deleted together a moment later: one statement for many. Until then the lease
   * keeps other workers off them, and were this process to die first, running one again changes nothing (every
   * handler is safe to repeat). A keyed job is deleted at once: an enqueue with its key would otherwise update the
   * finished row, and the deferred delete would take the new job with it.
   */
  const finished: Array<{ id: number; attempts: number }> = [];
  let flushScheduled: Promise<void> | undefined;

  function finish(id: number, attempts: number): void {
    finished.push({ id, attempts });
    flushScheduled ??= new Promise<void>((resolve) => setTimeout(resolve, FINISHED_FLUSH_MS)).then(flushFinished);
  }

  async function flushFinished(): Promise<void> {
    const done = finished.splice(0);
    flushScheduled = undefined;
    if (done.length === 0) return;
    const claims = sql.join(done.map(({ id, attempts }) => sql`(${id}::bigint, ${attempts}::int)`), sql`, `);
    await database.db
      .execute(sql`DELETE FROM jobs WHERE key IS NULL AND (id, attempts) IN (${claims})`)
      .catch((error) => log.warn({ err: error, jobs: done.length }, 'could not delete finished jobs; their leases pass and they run again'));
  }

  /** Renews the claim's lease every third of a lease while its handler runs; aborts `lost` when it cannot. */
  function keepLease(id: number, attempts: number): { lost: AbortSignal; stop(): void } {
    const lost = new AbortController();
    const renew = async () => {
      try {
        const renewed = await database.rows(sql`
          UPDATE jobs SET locked_until = now() + make_interval(secs => ${leaseSeconds}) WHERE id = ${id} AND attempts = ${attempts} RETURNING id`);
        if (renewed.length === 0) lost.abort(new Error('the job was claimed again'));
      } catch (error) {
        // Unreachable for now: the lease lasts until it passes; the next renewal tries again.
        if (!outage.failed(error)) log.warn({ err: error, job: id }, 'could not renew a job lease');
      }
    };
    const timer = setInterval(() => void renew(), (leaseSeconds * 1000) / 3);
    timer.unref();
    return { lost: lost.signal, stop: () => clearInterval(timer) };
  }

  async function runOne(job: ClaimedJob, handedOver?: unknown): Promise<void> {
    const id = Number(job.id);
    const { attempts } = job;
    const lease = keepLease(id, attempts);
    try {
      await handlers[job.kind](job.payload, { id, attempts, lastAttempt: attempts >= job.max_attempts, lost: lease.lost, handedOver });
      lease.stop();
      if (job.key === null) finish(id, attempts);
      else await database.db.execute(sql`DELETE FROM jobs WHERE id = ${id} AND attempts = ${attempts}`);
    } catch (error) {
      lease.stop();
      const message = error instanceof Error ? error.message : String(error);
      const exhausted = attempts >= job.max_attempts;
      // Exponential backoff: 1 s, 2 s, 4 s, … capped at 5 minutes.
      const delay = Math.min(2 ** (attempts - 1), 300);
      log.warn({ job: id, kind: job.kind, attempts, err: message, exhausted }, 'job failed');
      await database.db.execute(sql`
        UPDATE jobs SET locked_until = NULL, last_error = ${message},
          run_at = now() + make_interval(secs => ${delay}),
          failed_at = CASE WHEN ${exhausted} THEN now() ELSE NULL END
        WHERE id = ${id} AND attempts = ${attempts}`);
    }
  }

  async function drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await claim();
      if (claimed.length === 0) {
        await flushFinished();
        return total;
      }
      await Promise.all(claimed.map((job) => runOne(job)));
      total += claimed.length;
    }
  }

  /**
   * The drain after the one under way: what a call made during a drain waits for, since that drain's last claim
   * may have come before the caller's job was committed (a caller then saw its job left for a later poll).
   */
  let next: Promise<number> | null = null;

  function runDue(): Promise<number> {
    if (running) {
      next ??= running.then(() => {
        next = null;
        return stopped ? 0 : runDue();
      });
      return next;
    }
    running = drain()
      .then((count) => {
        outage.succeeded();
        return count;
      })
      .catch((error) => {
        // A lost database is said once (and its return once), not at every poll.
        if (!stopped && !outage.failed(error)) log.error({ err: error }, 'job worker poll failed');
        return 0;
      })
      .finally(() => {
        running = null;
      });
    return running;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => void runDue().then(schedule), pollMs);
    timer.unref();
  }
  schedule();

  async function enqueueHere(db: Queryable, kind: string, payload: Record<string, unknown>, alongside?: SQL[], handover?: unknown): Promise<ClaimedHere> {
    if (!handlers[kind]) throw new Error(`no handler for ${kind} jobs`);
    // A stopped worker runs nothing: the job is queued for any process to take at once.
    if (stopped) {
      await enqueueJob(db, kind, payload, { alongside });
      return { run: async () => {} };
    }
    const insert = claimedInsert.bind({ kind, payload: JSON.stringify(payload), leaseSeconds });
    const [claimed] = await queryRows<ClaimedJob>(db, withAlongside(alongside, insert));
    return {
      run() {
        // Stopped since: the job is handed back for any process to take at once.
        if (stopped) return release(claimed.id);
        const run = runOne(claimed, handover)
          .catch((error) => log.error({ err: error, job: claimed.id, kind }, 'job run failed'))
          .finally(() => runningHere.delete(run));
        runningHere.add(run);
        return run;
      },
    };
  }

  async function release(id: number | string): Promise<void> {
    await database.db
      .execute(sql`UPDATE jobs SET locked_until = NULL, attempts = attempts - 1 WHERE id = ${Number(id)}`)
      .catch((error) => log.warn({ err: error, job: id }, 'could not hand a job back; it waits for its lease'));
  }

  return {
    enqueueHere,
    // A stopped worker takes no more work, however it is woken (a shutting-down process, a notification).
    wake: () => void (stopped || runDue()),
    runDue,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all([running, ...runningHere]);
      await flushFinished();
    },
  };
}
