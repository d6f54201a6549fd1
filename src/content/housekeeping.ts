/**
 * Housekeeping of the content service, every ten minutes on whichever process claims the run
 * (platform/periodic-jobs.ts periodicJob): content MCP sessions that ended or sat idle for a day, jobs that failed
 * for good a week ago, and the embedded database's VACUUM ANALYZE (database.maintain()).
 */
import { type JobHandler } from '../platform/jobs.js';
import { deleteStaleSessions } from '../platform/mcp/sessions.js';
import type { ContentContext } from './context.js';
import { CONTENT_MCP_SESSION_SCOPE } from './mcp/server.js';
import { deleteFailedJobs, periodicJob } from '../platform/periodic-jobs.js';

export const CONTENT_HOUSEKEEPING_JOB = 'content.housekeeping';
const EVERY_SECONDS = 10 * 60;
/** An MCP session without a request for a day is over; its client initializes a new one on the 404. */
const MCP_SESSION_IDLE_SECONDS = 24 * 60 * 60;

const schedule = periodicJob(CONTENT_HOUSEKEEPING_JOB, EVERY_SECONDS);

export const ensureContentHousekeepingScheduled = schedule.ensureScheduled;

export function contentHousekeepingJob(ctx: ContentContext): JobHandler {
  return schedule.handler(ctx.db, async (_payload, job) => {
    const deleted = {
      mcpSessions: await deleteStaleSessions(ctx.db, CONTENT_MCP_SESSION_SCOPE, MCP_SESSION_IDLE_SECONDS, ctx.changes),
      failedJobs: await deleteFailedJobs(ctx.db),
    };
    await ctx.database.maintain();
    ctx.log[deleted.mcpSessions + deleted.failedJobs > 0 ? 'info' : 'debug']({ job: job.id, deleted }, 'housekeeping');
  });
}
