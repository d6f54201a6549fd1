/**
 * How work an agent was sent moves (DESIGN 4.5), whether the agent answered at once (200 `{result}`),
 * reports through the agent API, or could not be reached. One place applies each report to the operation
 * and, for a task delivery, to its task: `/complete` marks the task done, `/fail` (and `undeliverable`)
 * puts it back to open with the error as a progress event, progress and questions land on the task too.
 * Each report is one transaction, so the operation and its task never disagree.
 */
import type { Queryable } from '../../platform/database.js';
import { ignoreLostRace } from '../../platform/state-table.js';
import type { WithSubquery } from 'drizzle-orm';
import { orgErrors } from '../errors.js';
import { addProgress, completeOperation, failOperation, type OperationError } from '../operations/operations.js';
import type { OperationRow } from '../operations/states.js';
import type { NewActivity } from '../activity/records.js';
import { taskOperationInput } from '../tasks/records.js';
import { startTask, addTaskProgress, completeTask, reopenTask, askTaskQuestion } from '../tasks/agent.js';

export type WorkOutcome = { status: 'succeeded'; result: unknown } | { status: 'failed'; error: OperationError };

/** The task a `task` operation works on; undefined for other kinds. */
function taskOf(operation: OperationRow): string | undefined {
  return operation.kind === 'task' ? taskOperationInput.parse(operation.input).task_id : undefined;
}

/**
 * Ends the operation (and moves its task) with `outcome`; `invalid_state` when the operation already ended,
 * before anything of the operation or its task is written. A task that can no longer move (cancelled, or
 * finished by a person meanwhile) does not keep the operation from ending. `alongside`: writes that go with the
 * operation's move in its statement (a delivery's settlement); `told`: entries recorded before the move's own (the
 * attempt that ended it). Both are written whatever the move comes to. Without a task that one statement is all;
 * with one, it runs in a transaction with the task's move.
 */
export async function finishWork(
  db: Queryable,
  operation: OperationRow,
  outcome: WorkOutcome,
  { alongside = [], told }: { alongside?: WithSubquery[]; told?: NewActivity[] } = {},
): Promise<OperationRow> {
  const taskId = taskOf(operation);
  const held = { held: operation, told };
  const end = (on: Queryable) =>
    outcome.status === 'succeeded' ? completeOperation(on, held, outcome.result, alongside) : failOperation(on, held, outcome.error, alongside);
  if (!taskId) return end(db);
  // A refused end still commits `alongside`, as it does without a task.
  let refusal: unknown;
  const ended = await db.transaction(async (tx) => {
    const row = await end(tx).catch((error) => {
      // Anything but a lost race is thrown on, and rolls all of it back.
      refusal = ignoreLostRace(error) ?? error;
      return undefined;
    });
    if (!row) return undefined;
    if (outcome.status === 'succeeded') {
      await completeTask(tx, taskId, { result: outcome.result, operationId: operation.id }).catch(ignoreLostRace);
    } else {
      await reopenTask(tx, taskId, { error: outcome.error, operationId: operation.id }).catch(ignoreLostRace);
    }
    return row;
  });
  if (!ended) throw refusal;
  return ended;
}

/** The agent took the work (202): a delivered task is now in progress. */
export async function acceptWork(db: Queryable, operation: OperationRow): Promise<void> {
  const taskId = taskOf(operation);
  if (taskId) await startTask(db, taskId, { operationId: operation.id }).catch(ignoreLostRace);
}

export async function reportProgress(db: Queryable, operation: OperationRow, event: { message: string; percent?: number }): Promise<void> {
  await db.transaction(async (tx) => {
    await addProgress(tx, operation.id, event);
    const taskId = taskOf(operation);
    if (taskId) await addTaskProgress(tx, taskId, { ...event, operationId: operation.id });
  });
}

/** DESIGN 4.5 `/questions`: asks the task's people; the answer comes back as a `type: answer` delivery. */
export async function askQuestion(db: Queryable, operation: OperationRow, text: string): Promise<string> {
  const taskId = taskOf(operation);
  if (!taskId) throw orgErrors.invalidRequest(`questions are asked on task deliveries only; this operation is a ${operation.kind}`);
  return askTaskQuestion(db, taskId, { text, askedBy: operation.agentId ?? '', operationId: operation.id });
}
