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
 *   (naming the task's status) what the status table of states.ts does not allow;
 * - the assistant: `searchTasks`;
 * - the scheduler: `runDueTasks`, every TASK_RUNS_EVERY_SECONDS on one process (periodic job).
 *
 * Work for an agent is an operation of kind `task` with input `taskOperationInput`, started in the same
 * transaction as what caused it: on create for an assigned task without a schedule, and at each scheduled run
 * of an assigned task (DESIGN 4.5). Its kind is the delivery's (delivery/kinds.ts). The operation is the task creator's (they
 * follow it with get_operation); a scheduled run's has no client, since the organization started it.
 * Every such operation is named by a progress event of the task, so cancelling the task can cancel it.
 *
 * When a person answers a question the agent asked from an operation, an `org.task-answer` job
 * (`taskAnswerJob`) is queued in the same transaction, for the delivery to send the answer to that operation.
 */
import { asc, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import { toIso } from '../../platform/time.js';
import { recordActivity, type ActivityKind, type NewActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import { dateCursor, id as fieldId, text } from '../fields.js';
import { scheduleInput, scheduleRecord } from './schedules.js';
import { taskProgress, taskQuestions, tasks } from '../schema.js';
import { moveTask, TASK_STATUSES, type TaskEvent, type TaskRow } from './states.js';
import { jobKind } from '../../platform/jobs.js';

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

/** Queued when a person answers a question an agent asked from an operation; handled by the delivery. */
export const taskAnswerJob = jobKind<{ operation_id: string; task_id: string; question_id: string }>('org.task-answer');

/** A recurring task collects an event per run; a record shows the latest ones. */
export const PROGRESS_SHOWN = 100;

/** What a `task` operation's runner receives: the task, and the scheduled time it runs for (null on create). */
export const taskOperationInput = z.object({ task_id: z.string(), run_at: z.string().nullable() });

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
// What the person's and the agent's side share

/** A status move and the progress event that tells it, together. */
export async function recordMove(
  db: Queryable,
  taskId: string,
  event: TaskEvent,
  progress: { message: string; percent?: number; operationId?: string },
  changes: Parameters<typeof moveTask>[3] = {},
): Promise<TaskRecord> {
  return db.transaction(async (tx) => {
    const row = await moveTask(tx, taskId, event, changes);
    await addEvent(tx, taskId, progress);
    // Progress is the task's own record; a move of its status is the organization's too.
    if (event !== 'progress') await recordActivity(tx, taskActivity(row, 'task.updated', `task ${event}: ${progress.message}`, { event, operationId: progress.operationId }));
    return getTaskRecord(tx, taskId);
  });
}

/**
 * A task's activity entry: in its space, on behalf of the person it is for, through the client it came from, and
 * naming its agent unless another actor is given.
 */
export function taskActivity(
  row: TaskRow,
  kind: ActivityKind,
  summary: string,
  extra: { event?: string; operationId?: string | null; personId?: string; clientId?: string | null; details?: Record<string, unknown> } = {},
): NewActivity {
  return {
    kind,
    summary: `${summary} (“${quote(row.title)}”)`,
    spaceId: row.spaceId,
    personId: extra.personId ?? row.personId,
    clientId: extra.clientId === undefined ? row.clientId : extra.clientId,
    agentId: row.assigneeAgentId,
    operationId: extra.operationId ?? null,
    subject: row.id,
    details: { title: row.title, status: row.status, ...(extra.event ? { event: extra.event } : {}), ...extra.details },
  };
}

export async function addEvent(db: Queryable, taskId: string, event: { message: string; percent?: number; operationId?: string | null }): Promise<void> {
  await db.insert(taskProgress).values({ taskId, message: event.message, percent: event.percent ?? null, operationId: event.operationId ?? null });
}
export async function loadTask(db: Queryable, taskId: string): Promise<TaskRow> {
  const [row] = await db.select().from(tasks).where(eq(tasks.id, taskId));
  if (!row) throw orgErrors.notFound('task');
  return row;
}

export async function loadVisibleTask(db: Queryable, taskId: string, caller: Pick<TaskCaller, 'spaceIds'>): Promise<TaskRow> {
  const [row] = await db.select().from(tasks).where(eq(tasks.id, taskId));
  // DESIGN 4.3: a task in a space the person is not in is reported exactly as one that does not exist.
  if (!row || !caller.spaceIds.includes(row.spaceId)) throw orgErrors.notFound('task');
  return row;
}

export async function getTaskRecord(db: Queryable, taskId: string): Promise<TaskRecord> {
  const [record] = await toRecords(db, [await loadTask(db, taskId)]);
  return record;
}

/** Rows with their latest progress events and their questions, in three queries whatever their number. */
export async function toRecords(db: Queryable, rows: TaskRow[]): Promise<TaskRecord[]> {
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
    ...(row.schedule ? { schedule: row.schedule } : {}),
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

export function toQuestion(row: typeof taskQuestions.$inferSelect): TaskQuestion {
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

export function quote(text: string): string {
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}
