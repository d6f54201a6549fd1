/**
 * How work an agent was sent ends (DESIGN 4.5), whether it answered at once (200 `{result}`), reported
 * through the agent API, or could not be reached: one place applies the outcome to the operation.
 */
import type { Queryable } from '../../platform/database.js';
import type { OrgContext } from '../context.js';
import { completeOperation, failOperation, type OperationError } from '../operations/operations.js';
import type { OperationRow } from '../operations/states.js';

export type WorkOutcome = { status: 'succeeded'; result: unknown } | { status: 'failed'; error: OperationError };

/** Ends the operation with `outcome`; `invalid_state` when it already ended (the table of states.ts). */
export async function finishWork(ctx: OrgContext, db: Queryable, operation: OperationRow, outcome: WorkOutcome): Promise<OperationRow> {
  return outcome.status === 'succeeded'
    ? completeOperation(ctx, db, operation.id, outcome.result)
    : failOperation(ctx, db, operation.id, outcome.error);
}
