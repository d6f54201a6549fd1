/** Scheduled runs (DESIGN 4.1): due runs fire once however many processes look, and each run of an assigned task is delivered as a `task` operation. */
import { and, asc, desc, eq, isNotNull, notInArray, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import { ignoreLostRace } from '../../platform/state-table.js';
import { type JobHandler } from '../../platform/jobs.js';
import { toIso } from '../../platform/time.js';
import type { OrgContext } from '../context.js';
import { instantToLocal, nextRunAfter } from './schedules.js';
import { operations, taskProgress, tasks } from '../schema.js';
import { moveTask, type TaskRow } from './states.js';
import { addEvent, taskActivity, taskOperationInput } from './records.js';
import { recordActivity } from '../activity/records.js';
import { periodicJob } from '../../platform/periodic-jobs.js';
import { startOperation } from '../operations/operations.js';

export const TASK_RUNS_JOB = 'org.task-runs';
/** How often due runs are looked for: a run fires at most this late. */
export const TASK_RUNS_EVERY_SECONDS = 10;
const taskRuns = periodicJob(TASK_RUNS_JOB, TASK_RUNS_EVERY_SECONDS);

/** Makes sure the scheduler's next look is pending; called by every process at start. */
export const ensureTaskRunsScheduled = taskRuns.ensureScheduled;

export function taskRunsJob(ctx: OrgContext): JobHandler {
  return taskRuns.handler(ctx.db, async () => {
    const fired = await runDueTasks(ctx);
    if (fired > 0) ctx.log.info({ fired }, 'scheduled task runs fired');
  });
}

/**
 * Fires every run due at `now` (default: the clock), each once however many processes call this at the same
 * time; returns how many this call fired. Runs missed while no process ran are not replayed: the task's one
 * late run fires, and its next run is the first one after `now`.
 */
export async function runDueTasks(ctx: OrgContext, now: Date = new Date()): Promise<number> {
  let fired = 0;
  // A run that fails is left due for the next look, and skipped in this one so it cannot hold up the others.
  const failed: string[] = [];
  for (;;) {
    const due = await ctx.db
      .select({ id: tasks.id, nextRunAt: tasks.nextRunAt })
      .from(tasks)
      .where(and(sql`${tasks.nextRunAt} <= ${now.toISOString()}`, failed.length ? notInArray(tasks.id, failed) : undefined))
      .orderBy(asc(tasks.nextRunAt))
      .limit(100);
    for (const task of due) {
      try {
        if (await fireTaskRun(ctx, task.id, task.nextRunAt!, now)) fired++;
      } catch (error) {
        ctx.log.error({ err: error, task: task.id }, 'a scheduled task run failed; it stays due');
        failed.push(task.id);
      }
    }
    if (due.length < 100) return fired;
  }
}

/**
 * One due run, in one transaction. The claim is a conditional UPDATE of `next_run_at` from the due time to
 * the following one: of several processes firing the same run, the first commits and the others' UPDATE
 * then matches no row, so the run fires once. A task still in progress or waiting on a person skips the run
 * (recorded); otherwise the run opens it again and, when it has an agent, delivers it.
 */
async function fireTaskRun(ctx: OrgContext, taskId: string, dueAt: string, now: Date): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const [task] = await tx.select().from(tasks).where(and(eq(tasks.id, taskId), eq(tasks.nextRunAt, dueAt)));
    if (!task) return false;
    const schedule = task.schedule!;
    const due = new Date(toIso(dueAt));
    const next = nextRunAfter(schedule, new Date(Math.max(now.getTime(), due.getTime())));
    const claimed = await tx
      .update(tasks)
      .set({ nextRunAt: next?.toISOString() ?? null })
      .where(and(eq(tasks.id, taskId), eq(tasks.nextRunAt, dueAt)))
      .returning({ id: tasks.id });
    if (claimed.length === 0) return false;
    const runAt = due.toISOString();
    const when = `Scheduled run at ${instantToLocal(due, schedule.timezone)} ${schedule.timezone}`;
    const opened = await moveTask(tx, taskId, 'run').catch(ignoreLostRace);
    if (opened) await recordActivity(tx, taskActivity(opened, 'task.updated', `task run: ${when} is due`, { event: 'run', clientId: null }));
    if (!opened) {
      await addEvent(tx, taskId, { message: `${when} skipped: the task is still ${task.status.replace('_', ' ')}` });
    } else if (opened.assigneeAgentId) {
      await deliverTask(ctx, tx, opened, { runAt, clientId: null, message: `${when}: sent to its agent` });
    } else {
      await addEvent(tx, taskId, { message: `${when} is due` });
    }
    return true;
  });
}

// Inside

/**
 * Starts the `task` operation that delivers the task to its agent, named by a progress event. Its kind is the
 * delivery's (delivery/kinds.ts), which reads the tasks: tasks start it through the engine, by its input schema.
 */
export async function deliverTask(ctx: OrgContext, db: Queryable, task: TaskRow, run: { runAt: string | null; clientId: string | null; message: string }) {
  const input: z.infer<typeof taskOperationInput> = { task_id: task.id, run_at: run.runAt };
  const operationId = await startOperation(ctx, db, {
    kind: 'task',
    personId: task.personId,
    clientId: run.clientId,
    agentId: task.assigneeAgentId,
    spaceId: task.spaceId,
    input,
  });
  await addEvent(db, task.id, { message: run.message, operationId });
}

/** An operation that worked on a task: a delivery to its agent, on create or at a scheduled run. */
export interface TaskOperation {
  id: string;
  status: (typeof operations.$inferSelect)['status'];
  created_at: string;
  finished_at: string | null;
  error: (typeof operations.$inferSelect)['error'];
}

/**
 * The task's operations, newest first: those its latest progress events name (each run's event names its
 * operation), read backwards along task_progress_task_idx so a long-recurring task costs no more than a new one.
 */
export async function listTaskOperations(db: Queryable, taskId: string, limit = 20): Promise<TaskOperation[]> {
  const rows = await db
    .select({ id: operations.id, status: operations.status, createdAt: operations.createdAt, finishedAt: operations.finishedAt, error: operations.error })
    .from(taskProgress)
    .innerJoin(operations, eq(operations.id, taskProgress.operationId))
    .where(and(eq(taskProgress.taskId, taskId), isNotNull(taskProgress.operationId)))
    .orderBy(desc(taskProgress.id))
    .limit(limit * 5);
  const seen = new Map<string, TaskOperation>();
  for (const row of rows) {
    if (!seen.has(row.id)) seen.set(row.id, { id: row.id, status: row.status, created_at: toIso(row.createdAt), finished_at: toIso(row.finishedAt), error: row.error });
  }
  return [...seen.values()].sort((a, b) => b.created_at.localeCompare(a.created_at)).slice(0, limit);
}
