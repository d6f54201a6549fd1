/** The queue's upkeep: periodic jobs (one run at a time across every process) and the deletion of jobs failed long ago. */
import { sql } from 'drizzle-orm';
import { type Db, type Queryable } from './database.js';
import { jobs } from './schema.js';
import { type JobHandler, enqueueJob } from './jobs.js';

/** Jobs that failed for good stay a week for inspection (`SELECT … FROM jobs WHERE failed_at IS NOT NULL`). */
export const FAILED_JOB_RETENTION_SECONDS = 7 * 24 * 60 * 60;

/** Deletes jobs that failed for good longer ago than `olderThanSeconds`. */
export async function deleteFailedJobs(db: Queryable, olderThanSeconds = FAILED_JOB_RETENTION_SECONDS): Promise<number> {
  const deleted = await db
    .delete(jobs)
    .where(sql`${jobs.failedAt} < now() - make_interval(secs => ${olderThanSeconds})`)
    .returning({ id: jobs.id });
  return deleted.length;
}

export interface PeriodicJob {
  kind: string;
  /** Makes sure a run is pending; every process calls it at start (an existing schedule is kept). */
  ensureScheduled(db: Queryable): Promise<void>;
  /** The queue handler: schedules the next run in `db`, then does `run`. */
  handler(db: Db, run: JobHandler): JobHandler;
}

/**
 * A job that runs every `everySeconds` on whichever process claims it: one pending row under a fixed key,
 * so however many processes share the database, each run happens once. Each run first hands the key to
 * the next run, in one transaction, so a failing run never stops the schedule.
 */
export function periodicJob(kind: string, everySeconds: number): PeriodicJob {
  return {
    kind,
    ensureScheduled: (db) => enqueueJob(db, kind, {}, { key: kind, ifPending: 'keep' }),
    handler: (db, run) => async (payload, job) => {
      // The running job still holds the key, and the queue deletes it by id once this run succeeds.
      await db.transaction(async (tx) => {
        await tx.update(jobs).set({ key: null }).where(sql`${jobs.id} = ${job.id}`);
        await enqueueJob(tx, kind, {}, { key: kind, runAt: new Date(Date.now() + everySeconds * 1000) });
      });
      await run(payload, job);
    },
  };
}
