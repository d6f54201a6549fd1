/** get_operation (DESIGN 4.3, 4.4): any valid token may follow the work its person started. */
import { z } from 'zod';
import { isFinal, operationRecord, ownOperation, readOperation } from '../operations/operations.js';
import { cachedOrgRead } from '../read-cache.js';
import { id } from '../fields.js';
import { defineOrgTool } from './tools.js';

export const operationTools = [
  defineOrgTool({
    name: 'get_operation',
    description:
      'Shows an operation you started: its status (queued, running, paused awaiting a person, succeeded, failed, ' +
      'cancelled), progress events, and its result or error. Poll it after a tool returned an operation that was not ' +
      'finished yet. A paused operation waits for a person; it is a normal outcome, not an error.',
    scope: null,
    needsSpace: false,
    effect: 'read',
    input: z.object({ operation_id: id() }).strict(),
    output: operationRecord,
    annotations: { idempotentHint: true, openWorldHint: false },
    // A client polls it: an operation that can no longer change is kept in memory (read-cache.ts), checked for its person each time.
    run: async ({ operation_id }, { ctx, principal }) =>
      ownOperation(await cachedOrgRead(ctx, ctx.db, 'operations', 'readOperation', { operation_id }, () => readOperation(ctx.db, operation_id), finalOperation), principal.personId),
  }),
];

function finalOperation(found: Awaited<ReturnType<typeof readOperation>>): boolean {
  return found !== undefined && isFinal(found.record);
}
