/** get_operation (DESIGN 4.3, 4.4): any valid token may follow the work its person started. */
import { z } from 'zod';
import { getOperation, operationRecord } from '../operations/operations.js';
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
    run: ({ operation_id }, { ctx, principal }) => getOperation(ctx.db, operation_id, principal.personId),
  }),
];
