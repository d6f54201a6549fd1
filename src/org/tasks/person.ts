/** A task as a person works with it (the MCP tools and the inbox): create, list, read, answer, cancel, and the open questions. */
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { ignoreLostRace } from '../../platform/state-table.js';
import { orderedNow, toIso } from '../../platform/time.js';
import type { OrgContext } from '../context.js';
import { recordActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import { newId } from '../ids.js';
import { cancelOperation } from '../operations/operations.js';
import { instantToLocal, nextRunAfter, toSchedule, type Schedule } from './schedules.js';
import { agents, operations, taskProgress, taskQuestions, tasks } from '../schema.js';
import { moveTask, type TaskRow } from './states.js';
import { taskActivity, type TaskQuestion, type CancelTaskInput, addEvent, type CreateTaskInput, toRecords, quote, toQuestion, loadTask, type TaskCaller, loadVisibleTask, type AnswerTaskInput, type TaskPage, type ListTasksInput, getTaskRecord, type TaskRecord } from './records.js';
import { deliverTask } from './runs.js';
import { taskAnswerJob } from './records.js';
import { keysetPage, type Page } from '../../platform/paging.js';

/**
 * Creates a task in `input.space_id`, one of the caller's spaces (DESIGN 4.3: any other is `not_found`, as the tool
 * registry answers before; the console has no registry). An assignee must be an active agent of the organization
 * (one service_context lists); an assigned task without a schedule is delivered at once, a scheduled one at each run.
 */
export async function createTask(ctx: OrgContext, db: Queryable, input: CreateTaskInput, caller: TaskCaller): Promise<TaskRecord> {
  if (!caller.spaceIds.includes(input.space_id)) throw orgErrors.notFound('space');
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
  await recordActivity(db, taskActivity(task, 'task.created', 'created a task', { details: { schedule: schedule ?? null } }));
  if (task.assigneeAgentId && !schedule) await deliverTask(ctx, db, task, { runAt: null, clientId: caller.clientId, message: 'Sent to its agent' });
  return getTaskRecord(db, taskId);
}

/** Newest first; `next_cursor` is the last task's `created_at` (unique), so paging never skips or repeats. */
export async function listTasks(db: Queryable, query: ListTasksInput, caller: Pick<TaskCaller, 'spaceIds'>): Promise<TaskPage> {
  const page = await listTaskRows(db, query, caller);
  return { tasks: await toRecords(db, page.rows), next_cursor: page.next_cursor };
}

/** `listTasks` as stored rows, without their progress and questions: what a board of many tasks shows. */
export async function listTaskRows(db: Queryable, query: ListTasksInput, caller: Pick<TaskCaller, 'spaceIds'>): Promise<Page<TaskRow>> {
  const spaceIds = query.space_id !== undefined ? [query.space_id].filter((space) => caller.spaceIds.includes(space)) : [...caller.spaceIds];
  if (spaceIds.length === 0) return { rows: [], next_cursor: null };
  const where = and(
    inArray(tasks.spaceId, spaceIds),
    query.status ? eq(tasks.status, query.status) : undefined,
    query.assignee_agent_id ? eq(tasks.assigneeAgentId, query.assignee_agent_id) : undefined,
  );
  // NULLS LAST, as tasks_space_created_idx stores created_at (drizzle's `.desc()`).
  const order = { key: 'createdAt', column: tasks.createdAt, direction: 'newest_first', nulls: 'last' } as const;
  return keysetPage(db, { select: db.select().from(tasks).$dynamic(), from: tasks, where, order }, query);
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
export async function answerTask(db: Queryable, input: AnswerTaskInput, caller: TaskCaller): Promise<TaskRecord> {
  await loadVisibleTask(db, input.task_id, caller);
  return db.transaction(async (tx) => {
    const task = await moveTask(tx, input.task_id, 'answer');
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
    const answered = { operationId: question.operationId, personId: caller.personId, clientId: caller.clientId, details: { question_id: question.id, question: question.text } };
    await recordActivity(tx, taskActivity(task, 'task.answered', `answered “${quote(question.text)}”`, answered));
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
export async function cancelTask(db: Queryable, input: CancelTaskInput, caller: TaskCaller): Promise<TaskRecord> {
  await loadVisibleTask(db, input.task_id, caller);
  return db.transaction(async (tx) => {
    const task = await moveTask(tx, input.task_id, 'cancel', { nextRunAt: null });
    const message = input.reason ? `Cancelled: ${input.reason}` : 'Cancelled';
    await addEvent(tx, input.task_id, { message });
    const by = { event: 'cancel', personId: caller.personId, clientId: caller.clientId, details: { reason: input.reason ?? null } };
    await recordActivity(tx, taskActivity(task, 'task.updated', `task cancel: ${message}`, by));
    const live = await tx
      .selectDistinct({ id: operations.id })
      .from(taskProgress)
      .innerJoin(operations, eq(operations.id, taskProgress.operationId))
      .where(and(eq(taskProgress.taskId, input.task_id), inArray(operations.status, ['queued', 'running', 'paused'])));
    for (const operation of live) await cancelOperation(tx, operation.id).catch(ignoreLostRace);
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

async function checkAssignee(db: Queryable, agentId: string): Promise<void> {
  const [agent] = await db.select({ kind: agents.kind, status: agents.status }).from(agents).where(eq(agents.id, agentId));
  // Connected clients are callers, not agents work is assigned to (agents/records.ts listReachableAgents).
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
