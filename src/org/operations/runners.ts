/**
 * The runner of each kind of operation (operations.ts `OperationRunner`). A kind without a runner here fails
 * its operations with `not_implemented`.
 */
import { runAsk } from '../assistant/ask.js';
import { runCapability } from '../capabilities.js';
import { runMessage, runTask } from '../delivery/runners.js';
import type { OperationRunners } from './operations.js';

export const operationRunners: OperationRunners = { ask: runAsk, message: runMessage, task: runTask, capability: runCapability };
