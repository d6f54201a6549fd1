/**
 * The runner of each kind of operation (operations.ts `OperationRunner`). A kind without a runner here fails
 * its operations with `not_implemented`.
 */
import { runAsk } from '../assistant/ask.js';
import { runCapability } from '../capabilities/execute.js';
import { runMessage, runTask } from '../delivery/kinds.js';
import type { OperationRunners } from './operations.js';

export const operationRunners: OperationRunners = { ask: runAsk, message: runMessage, task: runTask, capability: runCapability };
