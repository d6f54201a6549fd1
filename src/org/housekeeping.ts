/**
 * Housekeeping of the org service: deletes what can never be used again, so no table grows for ever —
 * spent OAuth rows (auth/retention.ts), expired web sessions, passed rate-limit windows, MCP sessions
 * that ended or sat idle for a day, idempotency keys past their 24 hours, and agent API callback tokens that
 * can no longer authenticate.
 *
 * It runs as the periodic durable job `org.housekeeping` every ten minutes (platform/periodic-jobs.ts periodicJob):
 * however many processes share the database, one of them claims each run; every process ensures at start
 * that a run is pending.
 */
import { deleteSpentOAuthRows, type OAuthSweep } from '../auth/index.js';
import type { ChangeFeed } from '../platform/changes.js';
import type { Db } from '../platform/database.js';
import { type JobHandler } from '../platform/jobs.js';
import { deleteStaleSessions } from '../platform/mcp/sessions.js';
import { deletePassedWindows } from '../platform/rate-limit.js';
import type { OrgContext } from './context.js';
import { deleteExpiredCallbackTokens } from './delivery/callback-tokens.js';
import { ORG_MCP_SESSION_SCOPE } from './mcp/server.js';
import { deleteExpiredIdempotencyKeys } from './operations/idempotency.js';
import { deleteExpiredWebSessions } from './web/sessions.js';
import { deleteFailedJobs, periodicJob } from '../platform/periodic-jobs.js';

export const HOUSEKEEPING_JOB = 'org.housekeeping';
export const HOUSEKEEPING_EVERY_SECONDS = 10 * 60;
/** An MCP session without a request for a day is over; its client initializes a new one on the 404. */
export const MCP_SESSION_IDLE_SECONDS = 24 * 60 * 60;

export interface HousekeepingReport extends OAuthSweep {
  webSessions: number;
  rateLimitWindows: number;
  mcpSessions: number;
  failedJobs: number;
  idempotencyKeys: number;
  callbackTokens: number;
}

/** One sweep; each delete is idempotent, so two overlapping runs are harmless. Deleted MCP sessions are announced. */
export async function runHousekeeping(db: Db, changes: ChangeFeed): Promise<HousekeepingReport> {
  return {
    ...(await deleteSpentOAuthRows(db)),
    webSessions: await deleteExpiredWebSessions(db),
    rateLimitWindows: await deletePassedWindows(db),
    mcpSessions: await deleteStaleSessions(db, ORG_MCP_SESSION_SCOPE, MCP_SESSION_IDLE_SECONDS, changes),
    failedJobs: await deleteFailedJobs(db),
    idempotencyKeys: await deleteExpiredIdempotencyKeys(db),
    callbackTokens: await deleteExpiredCallbackTokens(db),
  };
}

const schedule = periodicJob(HOUSEKEEPING_JOB, HOUSEKEEPING_EVERY_SECONDS);

/** Makes sure a run is pending; called by every process at start. */
export const ensureHousekeepingScheduled = schedule.ensureScheduled;

export function housekeepingJob(ctx: OrgContext): JobHandler {
  return schedule.handler(ctx.db, async (_payload, job) => {
    const report = await runHousekeeping(ctx.db, ctx.changes);
    await ctx.database.maintain();
    const deleted = Object.values(report).reduce((sum, count) => sum + count, 0);
    ctx.log[deleted > 0 ? 'info' : 'debug']({ job: job.id, deleted: report }, 'housekeeping');
  });
}
