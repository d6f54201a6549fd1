/**
 * The runners of work sent to agents (DESIGN 4.5): a `message` operation, and a `task` operation (a task
 * assigned on create, or a scheduled run of it), are delivered to the agent's webhook; whether the agent
 * answered at once or reports later, the delivery (deliveries.ts) ends the operation, so the runner leaves
 * it running.
 */
import type { OrgContext } from '../context.js';
import type { RunnerOutcome } from '../operations/operations.js';
import type { OperationRow } from '../operations/states.js';
import { getTaskForAgent, type TaskOperationInput } from '../tasks/records.js';
import { deliverOperation } from './deliveries.js';

export async function runMessage(ctx: OrgContext, operation: OperationRow): Promise<RunnerOutcome> {
  const { text } = operation.input as { text: string };
  await deliverOperation(ctx, operation, 'message', { text });
  return { status: 'running' };
}

export async function runTask(ctx: OrgContext, operation: OperationRow): Promise<RunnerOutcome> {
  const { task_id, run_at } = operation.input as TaskOperationInput;
  // The task as it stands when first sent; a redelivery sends the same snapshot.
  const task = await getTaskForAgent(ctx.db, task_id, operation.agentId ?? '');
  await deliverOperation(ctx, operation, 'task', { task, run_at });
  return { status: 'running' };
}
