/**
 * Housekeeping of the org service: deletes what can never be used again, so no table grows for ever —
 * spent OAuth rows (auth/retention.ts), expired web sessions, passed rate-limit windows, and MCP sessions
 * that ended or sat idle for a day.
 *
 * It runs as the durable job `org.housekeeping` every ten minutes (DESIGN 6): one pending row with a fixed
 * key, so however many processes share the database, one of them claims each run. Each run first
 * enqueues the next, so a failing sweep never stops the schedule; every process ensures at start that a
 * run is pending (keeping an existing schedule, restarting one that failed for good).
 */
import { eq } from 'drizzle-orm';
import { deleteSpentOAuthRows, type OAuthSweep } from '../auth/retention.js';
import type { Queryable } from '../platform/database.js';
import { enqueueJob, type JobHandler } from '../platform/jobs.js';
import { deleteStaleSessions } from '../platform/mcp/sessions.js';
import { deletePassedWindows } from '../platform/rate-limit.js';
import { jobs } from '../platform/schema.js';
import type { OrgContext } from './context.js';
import { ORG_MCP_SESSION_SCOPE } from './mcp/server.js';
import { deleteExpiredWebSessions } from './web/sessions.js';

export const HOUSEKEEPING_JOB = 'org.housekeeping';
export const HOUSEKEEPING_EVERY_SECONDS = 10 * 60;
/** An MCP session without a request for a day is over; its client initializes a new one on the 404. */
export const MCP_SESSION_IDLE_SECONDS = 24 * 60 * 60;

export interface HousekeepingReport extends OAuthSweep {
  webSessions: number;
  rateLimitWindows: number;
  mcpSessions: number;
}

/** One sweep; each delete is idempotent, so two overlapping runs are harmless. */
export async function runHousekeeping(db: Queryable): Promise<HousekeepingReport> {
  return {
    ...(await deleteSpentOAuthRows(db)),
    webSessions: await deleteExpiredWebSessions(db),
    rateLimitWindows: await deletePassedWindows(db),
    mcpSessions: await deleteStaleSessions(db, ORG_MCP_SESSION_SCOPE, MCP_SESSION_IDLE_SECONDS),
  };
}

/** Makes sure a run is pending; called by every process at start. */
export async function ensureHousekeepingScheduled(db: Queryable): Promise<void> {
  await enqueueJob(db, HOUSEKEEPING_JOB, {}, { key: HOUSEKEEPING_JOB, keepPending: true });
}

export function housekeepingJob(ctx: OrgContext): JobHandler {
  return async (_payload, job) => {
    await scheduleNextRun(ctx.db, job.id);
    const report = await runHousekeeping(ctx.db);
    const deleted = Object.values(report).reduce((sum, count) => sum + count, 0);
    ctx.log[deleted > 0 ? 'info' : 'debug']({ job: job.id, deleted: report }, 'housekeeping');
  };
}

/**
 * The running job still holds the key, and the queue deletes it by id once this run succeeds; so the key is
 * handed over to the next run in one transaction before the sweep starts.
 */
async function scheduleNextRun(db: OrgContext['db'], runningJobId: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.update(jobs).set({ key: null }).where(eq(jobs.id, runningJobId));
    await enqueueJob(tx, HOUSEKEEPING_JOB, {}, { key: HOUSEKEEPING_JOB, runAt: new Date(Date.now() + HOUSEKEEPING_EVERY_SECONDS * 1000) });
  });
}
