/**
 * The runners of work sent to agents (DESIGN 4.5): a `message` operation is delivered to the agent's
 * webhook; whether the agent answered at once or reports later, the delivery (deliveries.ts) ends the
 * operation, so the runner leaves it running.
 */
import type { OrgContext } from '../context.js';
import type { RunnerOutcome } from '../operations/operations.js';
import type { OperationRow } from '../operations/states.js';
import { deliverOperation } from './deliveries.js';

export async function runMessage(ctx: OrgContext, operation: OperationRow): Promise<RunnerOutcome> {
  const { text } = operation.input as { text: string };
  await deliverOperation(ctx, operation, 'message', { text });
  return { status: 'running' };
}
