/**
 * The kinds of work sent to agents (DESIGN 4.5): a `message` operation, and a `task` operation (a task assigned
 * on create, or a scheduled run of it), are delivered to the agent's webhook; whether the agent answered at once
 * or reports later, the delivery (deliveries.ts) ends the operation, so the runner leaves it running.
 */
import { z } from 'zod';
import { defineOperationKind } from '../operations/kinds.js';
import { getTaskForAgent } from '../tasks/agent.js';
import { taskOperationInput } from '../tasks/records.js';
import { deliverOperation, firstDeliveryWrites, type HeldDelivery } from './deliveries.js';

/**
 * Held: the agent message_agent read to check it can be messaged, so the first attempt need not read it again;
 * run here, the start's statement stores the delivery with it, so the run sends at once.
 */
export const messageKind = defineOperationKind<{ text: string }, HeldDelivery>({
  kind: 'message',
  input: z.object({ text: z.string() }),
  firstWrites(ctx, operationId, input, held) {
    const first = firstDeliveryWrites(ctx, operationId, 'message', { text: input.text });
    return { writes: first.writes, held: { ...held, stored: first.stored } };
  },
  async run(ctx, operation, held) {
    await deliverOperation(ctx, operation, 'message', { text: operation.input.text }, held);
    return { status: 'running' };
  },
});

export const taskKind = defineOperationKind({
  kind: 'task',
  input: taskOperationInput,
  async run(ctx, operation) {
    const { task_id, run_at } = operation.input;
    // The task as it stands when first sent; a redelivery sends the same snapshot.
    const task = await getTaskForAgent(ctx.db, task_id, operation.agentId ?? '');
    await deliverOperation(ctx, operation, 'task', { task, run_at });
    return { status: 'running' };
  },
});
