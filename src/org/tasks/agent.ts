/** A task as its assigned agent sees and moves it (the delivery and the agent API): each move in the caller's transaction, refused as tasks/states.ts says. */
import { eq } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { announce } from '../events/announce.js';
import { recordActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import { newId } from '../ids.js';
import { type OperationError } from '../operations/operations.js';
import { taskQuestions, tasks } from '../schema.js';
import { moveTask } from './states.js';
import { addEvent, quote, taskActivity, recordMove, getTaskRecord, type TaskRecord } from './records.js';

/** The task as its assigned agent sees it; `not_found` for any other agent. */
export async function getTaskForAgent(db: Queryable, taskId: string, agentId: string): Promise<TaskRecord> {
  const [row] = await db.select({ assignee: tasks.assigneeAgentId }).from(tasks).where(eq(tasks.id, taskId));
  if (!row || row.assignee !== agentId) throw orgErrors.notFound('task');
  return getTaskRecord(db, taskId);
}

/** The agent took the task up: `open` → `in_progress`. */
export function startTask(db: Queryable, taskId: string, input: { operationId?: string } = {}): Promise<TaskRecord> {
  return recordMove(db, taskId, 'start', { message: 'Started by its agent', operationId: input.operationId });
}

/** A progress event from the agent (`POST /progress` of a task delivery); refused once the task is finished. */
export async function addTaskProgress(
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
  db: Queryable,
  taskId: string,
  input: { text: string; askedBy: string; operationId?: string },
): Promise<string> {
  const [row] = await db.select({ assignee: tasks.assigneeAgentId }).from(tasks).where(eq(tasks.id, taskId));
  if (!row || row.assignee !== input.askedBy) throw orgErrors.notFound('task');
  const questionId = newId('q');
  await db.transaction(async (tx) => {
    const task = await moveTask(tx, taskId, 'ask');
    await tx.insert(taskQuestions).values({
      id: questionId,
      taskId,
      text: input.text,
      askedByAgentId: input.askedBy,
      operationId: input.operationId ?? null,
    });
    await addEvent(tx, taskId, { message: `Asked: ${quote(input.text)}`, operationId: input.operationId });
    const asked = { operationId: input.operationId, details: { question_id: questionId, question: input.text } };
    await recordActivity(tx, taskActivity(task, 'task.question', `its agent asked “${quote(input.text)}”`, asked));
    await announce(tx, 'task.question', { task_id: taskId, question_id: questionId });
  });
  return questionId;
}

/** The agent finished (`POST /complete`, or an immediate answer): the task is `done`, its result kept. */
export function completeTask(db: Queryable, taskId: string, input: { result?: unknown; operationId?: string } = {}): Promise<TaskRecord> {
  return recordMove(db, taskId, 'complete', { message: 'Done', operationId: input.operationId }, { result: input.result ?? null });
}

/** The agent failed (`POST /fail`, or undeliverable): the task is `open` again, the error a progress event. */
export function reopenTask(db: Queryable, taskId: string, input: { error: OperationError; operationId?: string }): Promise<TaskRecord> {
  return recordMove(db, taskId, 'reopen', { message: `Failed (${input.error.code}): ${input.error.message}`, operationId: input.operationId });
}
