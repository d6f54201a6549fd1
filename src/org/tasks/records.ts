/**
 * Tracked tasks (DESIGN 4.1, 4.3, 4.5): work placed in a space, optionally assigned to an agent and run on a
 * schedule, with progress events and questions the agent asks its people.
 *
 * Who calls what:
 * - the MCP tools (mcp/task-tools.ts), for a person: `createTask`, `listTasks`, `getTask`, `answerTask`,
 *   `cancelTask`; a person sees only tasks in their spaces, anything else is `not_found`; the inbox:
 *   `listOpenTaskQuestions`, answered with `answerTask`;
 * - the delivery of a task to its agent and the agent API, for the assigned agent: `getTaskForAgent(db,
 *   taskId, agentId)`, and `startTask`, `addTaskProgress`, `askTaskQuestion`, `completeTask`, `reopenTask`,
 *   each `(ctx, db, taskId, input)`: they run in the caller's transaction `db` and refuse with `invalid_state`
 *   (naming the task's status) what the status table of task-states.ts does not allow;
 * - the assistant: `searchTasks`;
 * - the scheduler: `runDueTasks`, every TASK_RUNS_EVERY_SECONDS on one process (periodic job).
 *
 * Work for an agent is an operation of kind `task` with input `TaskOperationInput`, started in the same
 * transaction as what caused it: on create for an assigned task without a schedule, and at each scheduled run
 * of an assigned task (DESIGN 4.5). Its runner is the delivery's. The operation is the task creator's (they
 * follow it with get_operation); a scheduled run's has no client, since the organization started it.
 * Every such operation is named by a progress event of the task, so cancelling the task can cancel it.
 *
 * When a person answers a question the agent asked from an operation, an `org.task-answer` job
 * (`taskAnswerJob`) is queued in the same transaction, for the delivery to send the answer to that operation.
 */
import { and, asc, desc, eq, inArray, isNull, lt, notInArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import { ignoreLostRace } from '../../platform/state-table.js';
import { jobKind, periodicJob, type JobHandler } from '../../platform/jobs.js';
import { orderedNow, toIso } from '../../platform/time.js';
import type { OrgContext } from '../context.js';
import { orgErrors } from '../errors.js';
import { dateCursor, id as fieldId, text } from '../fields.js';
import { newId } from '../ids.js';
import { moveOperation, startOperation, type OperationError } from '../operations/operations.js';
import { instantToLocal, nextRunAfter, scheduleInput, scheduleRecord, toSchedule, type Schedule } from './schedules.js';
import { agents, operations, taskProgress, taskQuestions, tasks } from '../schema.js';
import { moveTask, TASK_STATUSES, type TaskEvent, type TaskRow } from './states.js';

// ---------------------------------------------------------------------------------------------------------
// Records

export const taskActor = z.object({ type: z.enum(['person', 'agent']), id: z.string() });

export const taskProgressEvent = z.object({
  at: z.string(),
  message: z.string(),
  percent: z.number().optional(),
  /** The operation the event belongs to: a delivery to the agent, a scheduled run. */
  operation_id: z.string().optional(),
});
export type TaskProgressEvent = z.infer<typeof taskProgressEvent>;

export const taskQuestion = z.object({
  id: z.string(),
  text: z.string(),
  asked_at: z.string(),
  asked_by: z.object({ type: z.literal('agent'), id: z.string() }).optional(),
  answer: z.string().optional(),
  answered_at: z.string().optional(),
  answered_by: z.object({ type: z.literal('person'), id: z.string() }).optional(),
});
export type TaskQuestion = z.infer<typeof taskQuestion>;

/** A task as tools show it (DESIGN 4.3 "Shapes"); the output schema of the task tools. */
export const taskRecord = z.object({
  id: z.string(),
  space_id: z.string(),
  title: z.string(),
  description: z.string(),
  status: z.enum(TASK_STATUSES),
  assignee_agent_id: z.string().optional(),
  created_by: taskActor,
  schedule: scheduleRecord.optional(),
  /** The next scheduled run (UTC); absent when none is left. */
  next_run_at: z.string().optional(),
  /** Oldest first; the latest PROGRESS_SHOWN events. */
  progress: z.array(taskProgressEvent),
  /** Oldest first. */
  questions: z.array(taskQuestion),
  /** What the agent reported when it last completed the task. */
  result: z.unknown().optional(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type TaskRecord = z.infer<typeof taskRecord>;

export const taskPage = z.object({ tasks: z.array(taskRecord), next_cursor: z.string().nullable() });
export type TaskPage = z.infer<typeof taskPage>;

/** A recurring task collects an event per run; a record shows the latest ones. */
export const PROGRESS_SHOWN = 100;

/** What a `task` operation's runner receives: the task, and the scheduled time it runs for (null on create). */
export interface TaskOperationInput extends Record<string, unknown> {
  task_id: string;
  run_at: string | null;
}

// ---------------------------------------------------------------------------------------------------------
// Inputs (the tools' argument schemas)

const id = fieldId;

export const createTaskInput = z
  .object({
    space_id: id('The space to place the task in, from service_context spaces.'),
    title: text().trim().min(1).max(200),
    description: text().max(20_000).optional(),
    assignee_agent_id: id('An agent from service_context agents: it receives the task (now, or at each scheduled run).').optional(),
    schedule: scheduleInput.optional(),
  })
  .strict();
export type CreateTaskInput = z.output<typeof createTaskInput>;

export const listTasksInput = z
  .object({
    status: z.enum(TASK_STATUSES).optional(),
    space_id: id('Only tasks in this space (default: all your spaces).').optional(),
    assignee_agent_id: id('Only tasks assigned to this agent.').optional(),
    limit: z.number().int().min(1).max(50).default(20).describe('1 to 50, default 20'),
    cursor: dateCursor()
      .optional()
      .describe('next_cursor of the previous page'),
  })
  .strict();
export type ListTasksInput = z.output<typeof listTasksInput>;

export const taskIdInput = z.object({ task_id: id('A task id from create_task or list_tasks.') }).strict();

export const answerTaskInput = z
  .object({
    task_id: id('The task whose agent asked.'),
    question_id: id('An unanswered question of that task (questions[].id).'),
    answer: text().trim().min(1).max(10_000),
  })
  .strict();
export type AnswerTaskInput = z.output<typeof answerTaskInput>;

export const cancelTaskInput = z
  .object({ task_id: id('The task to cancel.'), reason: text().trim().min(1).max(2000).optional() })
  .strict();
export type CancelTaskInput = z.output<typeof cancelTaskInput>;

/** A person acting through a client, with the spaces they belong to. */
export interface TaskCaller {
  personId: string;
  clientId: string | null;
  spaceIds: readonly string[];
}

// ---------------------------------------------------------------------------------------------------------
// A person's side (the MCP tools)

/**
 * Creates a task in `input.space_id` (the caller's space: the tool registry checks it). An assignee must be
 * an active agent of the organization (one service_context lists); an assigned task without a schedule is
 * delivered at once, a scheduled one at each run.
 */
export async function createTask(ctx: OrgContext, db: Queryable, input: CreateTaskInput, caller: TaskCaller): Promise<TaskRecord> {
  if (input.assignee_agent_id !== undefined) await checkAssignee(db, input.assignee_agent_id);
  const schedule = input.schedule && toSchedule(input.schedule);
  const nextRun = schedule ? firstRun(schedule) : null;
  const taskId = newId('tsk');
  const [{ now }] = await db.select({ now: sql<string>`${orderedNow()}` }).from(sql`(SELECT 1) AS one`);
  await db.insert(tasks).values({
    id: taskId,
    spaceId: input.space_id,
    title: input.title,
    description: input.description ?? '',
    assigneeAgentId: input.assignee_agent_id ?? null,
    createdByType: 'person',
    createdById: caller.personId,
    personId: caller.personId,
    clientId: caller.clientId,
    schedule: schedule ?? null,
    nextRunAt: nextRun?.toISOString() ?? null,
    createdAt: now,
    updatedAt: now,
  });
  const task = await loadTask(db, taskId);
  if (task.assigneeAgentId && !schedule) await deliverTask(ctx, db, task, { runAt: null, clientId: caller.clientId, message: 'Sent to its agent' });
  return getTaskRecord(db, taskId);
}

/** Newest first; `next_cursor` is the last task's `created_at` (unique), so paging never skips or repeats. */
export async function listTasks(db: Queryable, query: ListTasksInput, caller: Pick<TaskCaller, 'spaceIds'>): Promise<TaskPage> {
  const spaceIds = query.space_id !== undefined ? [query.space_id].filter((space) => caller.spaceIds.includes(space)) : [...caller.spaceIds];
  if (spaceIds.length === 0) return { tasks: [], next_cursor: null };
  const rows = await db
    .select()
    .from(tasks)
    .where(
      and(
        inArray(tasks.spaceId, spaceIds),
        query.status ? eq(tasks.status, query.status) : undefined,
        query.assignee_agent_id ? eq(tasks.assigneeAgentId, query.assignee_agent_id) : undefined,
        query.cursor ? lt(tasks.createdAt, query.cursor) : undefined,
      ),
    )
    .orderBy(sql`${tasks.createdAt} desc nulls last`)
    .limit(query.limit + 1);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return { tasks: await toRecords(db, page), next_cursor: rows.length > query.limit ? toIso(last.createdAt) : null };
}

/** A task in one of the caller's spaces; any other id is `not_found`. */
export async function getTask(db: Queryable, taskId: string, caller: Pick<TaskCaller, 'spaceIds'>): Promise<TaskRecord> {
  const [record] = await toRecords(db, [await loadVisibleTask(db, taskId, caller)]);
  return record;
}

/**
 * A person answers a question the task's agent asked, recording who answered and when. When no question is
 * left open, a waiting task returns to `in_progress`. The answer goes to the operation the question came from.
 */
export async function answerTask(ctx: OrgContext, db: Queryable, input: AnswerTaskInput, caller: TaskCaller): Promise<TaskRecord> {
  await loadVisibleTask(db, input.task_id, caller);
  return db.transaction(async (tx) => {
    await moveTask(tx, input.task_id, 'answer');
    const [question] = await tx
      .update(taskQuestions)
      .set({ answer: input.answer, answeredAt: sql`now()`, answeredByPersonId: caller.personId })
      .where(and(eq(taskQuestions.id, input.question_id), eq(taskQuestions.taskId, input.task_id), isNull(taskQuestions.answer)))
      .returning();
    if (!question) {
      const [asked] = await tx
        .select({ answeredAt: taskQuestions.answeredAt })
        .from(taskQuestions)
        .where(and(eq(taskQuestions.id, input.question_id), eq(taskQuestions.taskId, input.task_id)));
      if (!asked) throw orgErrors.notFound('question');
      throw orgErrors.invalidState('the question was already answered', { answered_at: toIso(asked.answeredAt) });
    }
    await addEvent(tx, input.task_id, { message: `Answered: ${quote(question.text)}`, operationId: question.operationId });
    const [open] = await tx
      .select({ id: taskQuestions.id })
      .from(taskQuestions)
      .where(and(eq(taskQuestions.taskId, input.task_id), isNull(taskQuestions.answer)))
      .limit(1);
    if (!open) await moveTask(tx, input.task_id, 'resume').catch(ignoreLostRace);
    if (question.operationId) {
      await taskAnswerJob.enqueue(tx, { operation_id: question.operationId, task_id: input.task_id, question_id: question.id });
    }
    return getTaskRecord(tx, input.task_id);
  });
}

/**
 * Cancels an unfinished task: no further scheduled runs, and the work its agent still has under way (its
 * queued, running or paused operations) is cancelled with it. A done or cancelled task is `invalid_state`.
 */
export async function cancelTask(ctx: OrgContext, db: Queryable, input: CancelTaskInput, caller: TaskCaller): Promise<TaskRecord> {
  await loadVisibleTask(db, input.task_id, caller);
  return db.transaction(async (tx) => {
    await moveTask(tx, input.task_id, 'cancel', { nextRunAt: null });
    await addEvent(tx, input.task_id, { message: input.reason ? `Cancelled: ${input.reason}` : 'Cancelled' });
    const live = await tx
      .selectDistinct({ id: operations.id })
      .from(taskProgress)
      .innerJoin(operations, eq(operations.id, taskProgress.operationId))
      .where(and(eq(taskProgress.taskId, input.task_id), inArray(operations.status, ['queued', 'running', 'paused'])));
    for (const operation of live) await moveOperation(tx, operation.id, 'cancel').catch(ignoreLostRace);
    return getTaskRecord(tx, input.task_id);
  });
}

/** An unanswered question of an unfinished task, as a person's inbox lists it. */
export interface OpenTaskQuestion {
  task_id: string;
  task_title: string;
  space_id: string;
  assignee_agent_id: string | null;
  question: TaskQuestion;
}

/**
 * The questions waiting for an answer in the person's spaces, oldest first (DESIGN 4.6: the inbox lists
 * open task questions with **Answer**, which is `answerTask`).
 */
export async function listOpenTaskQuestions(db: Queryable, spaceIds: readonly string[], limit = 50): Promise<OpenTaskQuestion[]> {
  if (spaceIds.length === 0) return [];
  const open = await db
    .select({ question: taskQuestions, title: tasks.title, spaceId: tasks.spaceId, assignee: tasks.assigneeAgentId })
    .from(taskQuestions)
    .innerJoin(tasks, eq(tasks.id, taskQuestions.taskId))
    .where(openQuestionIn(spaceIds))
    .orderBy(asc(taskQuestions.askedAt), asc(taskQuestions.id))
    .limit(limit);
  return open.map((row) => ({
    task_id: row.question.taskId,
    task_title: row.title,
    space_id: row.spaceId,
    assignee_agent_id: row.assignee,
    question: toQuestion(row.question),
  }));
}

/** How many questions `listOpenTaskQuestions` would list, without its limit: the count beside the inbox link. */
export async function countOpenTaskQuestions(db: Queryable, spaceIds: readonly string[]): Promise<number> {
  if (spaceIds.length === 0) return 0;
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(taskQuestions)
    .innerJoin(tasks, eq(tasks.id, taskQuestions.taskId))
    .where(openQuestionIn(spaceIds));
  return row?.count ?? 0;
}

/** An unanswered question of an unfinished task in one of these spaces. */
function openQuestionIn(spaceIds: readonly string[]) {
  return and(isNull(taskQuestions.answer), inArray(tasks.spaceId, [...spaceIds]), inArray(tasks.status, ['open', 'in_progress', 'waiting']));
}

// ---------------------------------------------------------------------------------------------------------
// The assigned agent's side (delivery and the agent API)

/** The task as its assigned agent sees it; `not_found` for any other agent. */
export async function getTaskForAgent(db: Queryable, taskId: string, agentId: string): Promise<TaskRecord> {
  const [row] = await db.select({ assignee: tasks.assigneeAgentId }).from(tasks).where(eq(tasks.id, taskId));
  if (!row || row.assignee !== agentId) throw orgErrors.notFound('task');
  return getTaskRecord(db, taskId);
}

/** The agent took the task up: `open` → `in_progress`. */
export function startTask(ctx: OrgContext, db: Queryable, taskId: string, input: { operationId?: string } = {}): Promise<TaskRecord> {
  return recordMove(db, taskId, 'start', { message: 'Started by its agent', operationId: input.operationId });
}

/** A progress event from the agent (`POST /progress` of a task delivery); refused once the task is finished. */
export async function addTaskProgress(
  ctx: OrgContext,
  db: Queryable,
  taskId: string,
  input: { message: string; percent?: number; operationId?: string },
): Promise<void> {
  if (input.percent !== undefined && !(input.percent >= 0 && input.percent <= 100)) throw orgErrors.invalidArgument('percent', 'a number from 0 to 100');
  await recordMove(db, taskId, 'progress', input);
}

/**
 * The assigned agent asks the task's people a question (`POST /questions`): the task waits until every open
 * question is answered. Returns the question's id. `operationId` is the operation the agent works in, which
 * the answer is delivered to.
 */
export async function askTaskQuestion(
  ctx: OrgContext,
  db: Queryable,
  taskId: string,
  input: { text: string; askedBy: string; operationId?: string },
): Promise<string> {
  const [row] = await db.select({ assignee: tasks.assigneeAgentId }).from(tasks).where(eq(tasks.id, taskId));
  if (!row || row.assignee !== input.askedBy) throw orgErrors.notFound('task');
  const questionId = newId('q');
  await db.transaction(async (tx) => {
    await moveTask(tx, taskId, 'ask');
    await tx.insert(taskQuestions).values({
      id: questionId,
      taskId,
      text: input.text,
      askedByAgentId: input.askedBy,
      operationId: input.operationId ?? null,
    });
    await addEvent(tx, taskId, { message: `Asked: ${quote(input.text)}`, operationId: input.operationId });
  });
  return questionId;
}

/** The agent finished (`POST /complete`, or an immediate answer): the task is `done`, its result kept. */
export function completeTask(ctx: OrgContext, db: Queryable, taskId: string, input: { result?: unknown; operationId?: string } = {}): Promise<TaskRecord> {
  return recordMove(db, taskId, 'complete', { message: 'Done', operationId: input.operationId }, { result: input.result ?? null });
}

/** The agent failed (`POST /fail`, or undeliverable): the task is `open` again, the error a progress event. */
export function reopenTask(ctx: OrgContext, db: Queryable, taskId: string, input: { error: OperationError; operationId?: string }): Promise<TaskRecord> {
  return recordMove(db, taskId, 'reopen', { message: `Failed (${input.error.code}): ${input.error.message}`, operationId: input.operationId });
}

// ---------------------------------------------------------------------------------------------------------
// Search (the assistant's retrieval)

export interface TaskHit {
  id: string;
  space_id: string;
  title: string;
  status: TaskRecord['status'];
  assignee_agent_id: string | null;
  created_by: z.infer<typeof taskActor>;
  created_at: string;
  updated_at: string;
  /** The matching part of the description (or its beginning, or the title when it has none). */
  excerpt: string;
  /** Higher is better; full-text matches rank above trigram ones. */
  rank: number;
}

/**
 * Tasks in `spaceIds` matching `query`, best first: PostgreSQL full-text search (`websearch_to_tsquery` over
 * the generated `search` tsvector, GIN index), then, to fill up to `limit`, trigram word similarity for short
 * or partial words the full-text parser does not match (`deplo` → "deploy").
 */
export async function searchTasks(db: Queryable, spaceIds: readonly string[], query: string, limit: number): Promise<TaskHit[]> {
  const words = query.trim();
  if (spaceIds.length === 0 || words === '' || limit < 1) return [];
  const inSpaces = inArray(tasks.spaceId, [...spaceIds]);
  const tsQuery = sql`websearch_to_tsquery('english', ${words})`;
  const fullText = await db
    .select({
      ...hitColumns,
      excerpt: sql<string>`ts_headline('english', CASE WHEN ${tasks.description} = '' THEN ${tasks.title} ELSE ${tasks.description} END, ${tsQuery}, 'StartSel="",StopSel="",MaxWords=35,MinWords=15,MaxFragments=1')`,
      rank: sql<number>`ts_rank_cd(${tasks.search}, ${tsQuery})::float8 + 1`,
    })
    .from(tasks)
    .where(and(inSpaces, sql`${tasks.search} @@ ${tsQuery}`))
    .orderBy(sql`ts_rank_cd(${tasks.search}, ${tsQuery}) DESC`, desc(tasks.updatedAt))
    .limit(limit);
  const found = new Set(fullText.map((hit) => hit.id));
  const needle = words.toLowerCase();
  const similar =
    fullText.length >= limit
      ? []
      : await db
          .select({
            ...hitColumns,
            excerpt: sql<string>`left(CASE WHEN ${tasks.description} = '' THEN ${tasks.title} ELSE ${tasks.description} END, 240)`,
            rank: sql<number>`word_similarity(${needle}, ${tasks.searchText})::float8`,
          })
          .from(tasks)
          .where(and(inSpaces, sql`${needle} <% ${tasks.searchText}`))
          .orderBy(sql`word_similarity(${needle}, ${tasks.searchText}) DESC`, desc(tasks.updatedAt))
          .limit(limit);
  return [...fullText, ...similar.filter((hit) => !found.has(hit.id))].slice(0, limit).map((hit) => ({
    id: hit.id,
    space_id: hit.spaceId,
    title: hit.title,
    status: hit.status,
    assignee_agent_id: hit.assigneeAgentId,
    created_by: { type: hit.createdByType, id: hit.createdById },
    created_at: toIso(hit.createdAt),
    updated_at: toIso(hit.updatedAt),
    excerpt: hit.excerpt,
    rank: Number(hit.rank),
  }));
}

const hitColumns = {
  id: tasks.id,
  spaceId: tasks.spaceId,
  title: tasks.title,
  status: tasks.status,
  assigneeAgentId: tasks.assigneeAgentId,
  createdByType: tasks.createdByType,
  createdById: tasks.createdById,
  createdAt: tasks.createdAt,
  updatedAt: tasks.updatedAt,
};

// ---------------------------------------------------------------------------------------------------------
// Scheduled runs

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

/** Queued when a person answers a question an agent asked from an operation; handled by the delivery. */
export const taskAnswerJob = jobKind<{ operation_id: string; task_id: string; question_id: string }>('org.task-answer');

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
    const schedule = task.schedule as Schedule;
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

// ---------------------------------------------------------------------------------------------------------
// Inside

/** Starts the `task` operation that delivers the task to its agent, named by a progress event. */
async function deliverTask(ctx: OrgContext, db: Queryable, task: TaskRow, run: { runAt: string | null; clientId: string | null; message: string }) {
  const input: TaskOperationInput = { task_id: task.id, run_at: run.runAt };
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

/** A status move and the progress event that tells it, together. */
async function recordMove(
  db: Queryable,
  taskId: string,
  event: TaskEvent,
  progress: { message: string; percent?: number; operationId?: string },
  changes: Parameters<typeof moveTask>[3] = {},
): Promise<TaskRecord> {
  return db.transaction(async (tx) => {
    await moveTask(tx, taskId, event, changes);
    await addEvent(tx, taskId, progress);
    return getTaskRecord(tx, taskId);
  });
}

async function addEvent(db: Queryable, taskId: string, event: { message: string; percent?: number; operationId?: string | null }): Promise<void> {
  await db.insert(taskProgress).values({ taskId, message: event.message, percent: event.percent ?? null, operationId: event.operationId ?? null });
}

async function checkAssignee(db: Queryable, agentId: string): Promise<void> {
  const [agent] = await db.select({ kind: agents.kind, status: agents.status }).from(agents).where(eq(agents.id, agentId));
  // Connected clients are callers, not agents work is assigned to (agents.ts listReachableAgents).
  if (!agent || agent.kind === 'client') {
    throw orgErrors.invalidArgument('assignee_agent_id', 'no such agent: use an agent id from service_context agents');
  }
  if (agent.status !== 'active') throw orgErrors.invalidArgument('assignee_agent_id', 'this agent is disabled and cannot take tasks');
}

/** The first run of a new schedule; a schedule with none left is refused, naming what is wrong. */
function firstRun(schedule: Schedule): Date {
  const now = new Date();
  const next = nextRunAfter(schedule, now);
  if (next) return next;
  if ('at' in schedule) {
    throw orgErrors.invalidArgument('schedule.at', `is in the past: it is now ${instantToLocal(now, schedule.timezone)} in ${schedule.timezone}`);
  }
  throw orgErrors.invalidArgument('schedule.cron', 'never matches a date from now on');
}

async function loadTask(db: Queryable, taskId: string): Promise<TaskRow> {
  const [row] = await db.select().from(tasks).where(eq(tasks.id, taskId));
  if (!row) throw orgErrors.notFound('task');
  return row;
}

async function loadVisibleTask(db: Queryable, taskId: string, caller: Pick<TaskCaller, 'spaceIds'>): Promise<TaskRow> {
  const [row] = await db.select().from(tasks).where(eq(tasks.id, taskId));
  // DESIGN 4.3: a task in a space the person is not in is reported exactly as one that does not exist.
  if (!row || !caller.spaceIds.includes(row.spaceId)) throw orgErrors.notFound('task');
  return row;
}

async function getTaskRecord(db: Queryable, taskId: string): Promise<TaskRecord> {
  const [record] = await toRecords(db, [await loadTask(db, taskId)]);
  return record;
}

/** Rows with their latest progress events and their questions, in three queries whatever their number. */
async function toRecords(db: Queryable, rows: TaskRow[]): Promise<TaskRecord[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const [events, questions] = await Promise.all([
    db
      .select()
      .from(
        db
          .select({
            taskId: taskProgress.taskId,
            id: taskProgress.id,
            at: taskProgress.at,
            message: taskProgress.message,
            percent: taskProgress.percent,
            operationId: taskProgress.operationId,
            newest: sql<number>`row_number() OVER (PARTITION BY ${taskProgress.taskId} ORDER BY ${taskProgress.id} DESC)`.as('newest'),
          })
          .from(taskProgress)
          .where(inArray(taskProgress.taskId, ids))
          .as('events'),
      )
      .where(sql`newest <= ${PROGRESS_SHOWN}`)
      .orderBy(sql`id`),
    db.select().from(taskQuestions).where(inArray(taskQuestions.taskId, ids)).orderBy(asc(taskQuestions.askedAt), asc(taskQuestions.id)),
  ]);
  return rows.map((row) => ({
    id: row.id,
    space_id: row.spaceId,
    title: row.title,
    description: row.description,
    status: row.status,
    ...(row.assigneeAgentId ? { assignee_agent_id: row.assigneeAgentId } : {}),
    created_by: { type: row.createdByType, id: row.createdById },
    ...(row.schedule ? { schedule: row.schedule as Schedule } : {}),
    ...(row.nextRunAt ? { next_run_at: toIso(row.nextRunAt) } : {}),
    progress: events
      .filter((event) => event.taskId === row.id)
      .map((event) => ({
        at: toIso(event.at),
        message: event.message,
        ...(event.percent === null ? {} : { percent: event.percent }),
        ...(event.operationId === null ? {} : { operation_id: event.operationId }),
      })),
    questions: questions.filter((question) => question.taskId === row.id).map(toQuestion),
    ...(row.result === null ? {} : { result: row.result }),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  }));
}

function toQuestion(row: typeof taskQuestions.$inferSelect): TaskQuestion {
  return {
    id: row.id,
    text: row.text,
    asked_at: toIso(row.askedAt),
    ...(row.askedByAgentId ? { asked_by: { type: 'agent' as const, id: row.askedByAgentId } } : {}),
    ...(row.answer === null ? {} : { answer: row.answer }),
    ...(row.answeredAt === null ? {} : { answered_at: toIso(row.answeredAt) }),
    ...(row.answeredByPersonId ? { answered_by: { type: 'person' as const, id: row.answeredByPersonId } } : {}),
  };
}

function quote(text: string): string {
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}
