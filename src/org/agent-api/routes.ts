/**
 * The agent API (DESIGN 4.5): where an agent reports on work it was delivered, under the delivery's
 * `callback.url` (`{ORG_PUBLIC_URL}/agent-api/operations/:operation_id`), authenticated by the delivery's
 * `callback.token` as a bearer token (delivery/callback-tokens.ts).
 *
 * Order of refusals: no valid token for this operation 401 (before the body is read) → malformed body 400 →
 * the operation already ended 409 `invalid_state`.
 */
import type { FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { HttpServer } from '../../platform/http.js';
import { currentTraceparent, withTraceparent } from '../../platform/trace.js';
import type { OrgContext } from '../context.js';
import { orgErrors } from '../errors.js';
import { id, jsonObject, jsonValue, text } from '../fields.js';
import { searchMemory } from '../memory/search.js';
import { executeCapability } from '../capabilities/execute.js';
import { findCapability } from '../capabilities/catalogue.js';
import { withIdempotencyKey } from '../operations/idempotency.js';
import { awaitOperation, findOperation, operationRecord, runStartedHere, startingHere, toOperationRecord, type OperationRecord } from '../operations/operations.js';
import { SETTLED_STATUSES, type OperationRow } from '../operations/states.js';
import { authenticateCallback } from '../delivery/callback-tokens.js';
import { askQuestion, finishWork, reportProgress } from '../delivery/work.js';
import { memoryPage, recordMemoryInput, memoryItemRecord, MEMORY_KINDS } from '../memory/records.js';
import { recordMemory } from '../memory/write.js';
import { writeOrg } from '../changes.js';

export const AGENT_API_PREFIX = '/agent-api/operations/:operation_id';
/** How long a capability execution is waited for before its operation is returned as it stands (DESIGN 4.3's default). */
const EXECUTE_WAIT_SECONDS = 5;

const params = z.object({ operation_id: id() });
const progressBody = z.strictObject({ message: text().min(1).max(2000), percent: z.number().min(0).max(100).optional() });
const completeBody = z.strictObject({ result: jsonValue() }).refine((body) => 'result' in body, { message: 'result is required', path: ['result'] });
const failBody = z.strictObject({
  error: z.union([text().min(1).max(2000), z.strictObject({ message: text().min(1).max(2000), code: text().max(100).optional() })]),
});
const questionBody = z.strictObject({ text: text().min(1).max(2000) });
const executeBody = z.strictObject({
  input: jsonObject(),
  idempotency_key: id(),
  dry_run: z.boolean().default(false),
});
const executeParams = params.extend({ capability_id: id() });
const memoryQuery = z.strictObject({
  query: text().min(1).max(500),
  kind: z.enum(MEMORY_KINDS).optional(),
  limit: z.coerce.number().int().min(1).max(50).optional(),
  cursor: text().min(1).max(1000).optional(),
});
const reported = z.object({ operation: operationRecord });

const tags = ['agent API'];

/** The operation the request's token was issued for (set by the authentication hook). */
const authenticated = new WeakMap<FastifyRequest, OperationRow>();

export function registerAgentApi(app: HttpServer, ctx: OrgContext): void {
  app.register(
    async (plugin) => {
      const scope = plugin.withTypeProvider<ZodTypeProvider>();
      // Authentication comes first, so an agent without a valid token learns nothing about bodies or states.
      scope.addHook('onRequest', async (request) => {
        const header = request.headers.authorization ?? '';
        const token = /^Bearer +(\S+)$/i.exec(header)?.[1];
        const { operation_id } = request.params as { operation_id: string };
        authenticated.set(request, await authenticateCallback(ctx.db, operation_id, token));
      });
      // A report without a trace of its own belongs to the trace of the operation it reports on.
      scope.addHook('preHandler', (request, _reply, done) => withTraceparent(currentTraceparent() ?? authenticated.get(request)?.traceparent, done));

      scope.post(
        '/progress',
        { schema: { tags, summary: 'Add a progress event', params, body: progressBody, response: { 200: reported } } },
        async (request) => {
          const operation = current(request);
          await reportProgress(ctx.db, operation, request.body);
          return { operation: await reload(ctx, operation.id) };
        },
      );

      scope.post(
        '/complete',
        { schema: { tags, summary: 'The work succeeded with this result', params, body: completeBody, response: { 200: reported } } },
        async (request) => {
          const row = await finishWork(ctx.db, current(request), { status: 'succeeded', result: request.body.result });
          return { operation: toOperationRecord(row) };
        },
      );

      scope.post(
        '/fail',
        { schema: { tags, summary: 'The work failed', params, body: failBody, response: { 200: reported } } },
        async (request) => {
          const { error } = request.body;
          const message = typeof error === 'string' ? error : error.message;
          const row = await finishWork(ctx.db, current(request), { status: 'failed', error: { code: 'agent_failed', message } });
          return { operation: toOperationRecord(row) };
        },
      );

      scope.post(
        '/questions',
        {
          schema: {
            tags,
            summary: "Ask the task's people a question (task deliveries); the answer comes as a `type: answer` delivery",
            params,
            body: questionBody,
            response: { 200: z.object({ question_id: z.string() }) },
          },
        },
        async (request) => ({ question_id: await askQuestion(ctx.db, stillRunning(current(request)), request.body.text) }),
      );

      scope.get(
        '/memory',
        { schema: { tags, summary: "Search memory in the operation's space", params, querystring: memoryQuery, response: { 200: memoryPage } } },
        async (request) => {
          const spaceId = spaceOf(stillRunning(current(request)));
          return searchMemory(ctx.db, { ...request.query, space_id: spaceId }, { spaceIds: [spaceId] });
        },
      );

      scope.post(
        '/memory',
        {
          schema: {
            tags,
            summary: "Record memory in the operation's space, recorded by this agent from this operation",
            params,
            body: recordMemoryInput.omit({ space_id: true }),
            response: { 201: memoryItemRecord },
          },
        },
        async (request, reply) => {
          const operation = stillRunning(current(request));
          const spaceId = spaceOf(operation);
          const recorder = {
            type: 'agent' as const,
            agentId: operation.agentId!,
            onBehalfOfPersonId: operation.personId,
            operationId: operation.id,
            clientId: operation.clientId,
          };
          const item = await writeOrg(ctx, [], (tx, changed) => recordMemory(tx, { ...request.body, space_id: spaceId }, recorder, { spaceIds: [spaceId] }, changed));
          return reply.code(201).send(item);
        },
      );

      scope.post(
        '/capabilities/:capability_id/execute',
        { schema: { tags, summary: 'Run a capability through the gate as this agent', params: executeParams, body: executeBody } },
        async (request) => {
          const operation = stillRunning(current(request));
          const spaceId = spaceOf(operation);
          const { input, idempotency_key: key, dry_run: dryRun } = request.body;
          const capabilityId = request.params.capability_id;
          // DESIGN 4.4: the same gate as for a client, with this agent's autonomy and budget; the work belongs to
          // the person the operation is for. Keys are this agent's own (operations/idempotency.ts).
          const keyed = { personId: operation.personId, clientId: `agent:${operation.agentId}`, key, tool: 'execute_capability', args: { capabilityId, input, spaceId, dryRun } };
          const execute = { input, spaceId, dryRun, agentId: operation.agentId!, personId: operation.personId, clientId: null };
          const { value: produced, started } = await startingHere(() =>
            withIdempotencyKey(ctx.db, keyed, async (tx) => {
              const outcome = await executeCapability(ctx, tx, { ...execute, capability: await findCapability(tx, capabilityId) });
              return 'dryRun' in outcome ? { result: { dry_run: true, verdict: outcome.dryRun } } : { operationId: outcome.operationId };
            }),
          );
          if ('result' in produced) return produced.result;
          return { operation: await awaitOperation(ctx, produced.operationId, operation.personId, EXECUTE_WAIT_SECONDS, runStartedHere(started)) };
        },
      );
    },
    { prefix: AGENT_API_PREFIX },
  );
}

function current(request: FastifyRequest): OperationRow {
  const operation = authenticated.get(request);
  if (!operation) throw orgErrors.unauthorized('the callback token is missing, wrong or expired for this operation');
  return operation;
}

/** A report on work that ended is refused, naming how it ended (the grace period of delivery/callback-tokens.ts). */
function stillRunning(operation: OperationRow): OperationRow {
  if (SETTLED_STATUSES.includes(operation.status)) {
    throw orgErrors.invalidState(`the operation is ${operation.status}, so it takes no more reports`, { status: operation.status });
  }
  return operation;
}

/** DESIGN 4.5: memory an agent reads and records is its operation's space's. */
function spaceOf(operation: OperationRow): string {
  if (!operation.spaceId) throw orgErrors.invalidRequest('this operation is not placed in a space, so it has no memory to search or record in');
  return operation.spaceId;
}

async function reload(ctx: OrgContext, id: string): Promise<OperationRecord> {
  const row = await findOperation(ctx.db, id);
  if (!row) throw orgErrors.notFound('operation');
  return toOperationRecord(row);
}
