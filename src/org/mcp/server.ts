/**
 * The organization MCP endpoint (interface A; spec 4.2, DESIGN 4.3): `POST {ORG_PUBLIC_URL}/mcp`, protocol
 * 2025-06-18 over Streamable HTTP. Transport, database sessions, Host/Origin guard and the 1 MiB body and
 * 25-message batch limits come from platform/mcp; this module adds bearer authentication (bearer.ts), the
 * per-tool scope check (scope-check.ts) and the org tools.
 *
 * Order of refusals for a POST: foreign Host/Origin 403 → no valid token 401 → body over 1 MiB 413 →
 * batch over 25 413 → a tools/call lacking its scope 403 → the MCP server.
 */
import { isInputRequiredResult, type Server, type Tool } from '@modelcontextprotocol/server';
import type { FastifyReply } from 'fastify';
import { resourceMetadataUrl } from '../../auth/index.js';
import type { HttpServer } from '../../platform/http.js';
import { sendError, toAppError } from '../../platform/http.js';
import { registerMcpEndpoint, type McpCall } from '../../platform/mcp/endpoint.js';
import { buildMcpToolRegistry } from '../../platform/mcp/tools.js';
import { currentTraceparent, parseTraceparent, withTraceparent } from '../../platform/trace.js';
import type { OrgContext } from '../context.js';
import { authenticateBearer, BearerRefusal } from './bearer.js';
import { orgApps, type OrgApps } from './apps/index.js';
import { agentTools } from './agent-tools.js';
import { capabilityTools } from './capability-tools.js';
import { contextTools } from './context-tools.js';
import { assistantTools } from './assistant-tools.js';
import { memoryTools } from './memory-tools.js';
import { decisionTools } from './decision-tools.js';
import { callToolReachingThePerson } from './decision-reach.js';
import { findMissingScope, insufficientScopeAnswer } from './scope-check.js';
import { orgServerInfo, orgToolPresentation } from './presentation.js';
import { operationTools } from './operation-tools.js';
import { taskTools } from './task-tools.js';
import { operationTasks, type OperationTasks } from './operation-tasks.js';
import { toOrgTool, TOOL_DEADLINE_MS, type OrgMcpCall, type OrgPrincipal, type OrgTool, type OrgToolDefinition, type OrgToolRegistry } from './tools.js';

/** Spec 9 and DESIGN 4.3. */
export const ORG_MCP_INFO = { name: 'atrium-org', version: '1.0.0' } as const;
export const ORG_MCP_PROTOCOL = '2025-06-18';
/** DESIGN 4.9: the contract's revision first (what an unknown version is answered), then the newer ones. */
export const ORG_MCP_PROTOCOLS = [ORG_MCP_PROTOCOL, '2025-11-25'] as const;
export const ORG_MCP_MODERN_PROTOCOLS = ['2026-07-28'] as const;
export const ORG_MCP_PATH = '/mcp';
/** The org endpoint's rows in the shared MCP session table. */
export const ORG_MCP_SESSION_SCOPE = 'org';
/** Spec 8. */
const MAX_BATCH_LENGTH = 25;

/** Every org tool, each carrying its scope. */
export const orgTools: readonly OrgToolDefinition[] = [
  ...contextTools,
  ...operationTools,
  ...agentTools,
  ...memoryTools,
  ...taskTools,
  ...assistantTools,
  ...capabilityTools,
  ...decisionTools,
];

export interface OrgMcpOptions {
  tools?: readonly OrgToolDefinition[];
  /** A call's deadline in ms (spec 7.1: 25 s). */
  deadlineMs?: number;
}

export function registerOrgMcp(app: HttpServer, ctx: OrgContext, options: OrgMcpOptions = {}): void {
  const definitions = options.tools ?? orgTools;
  const tools = definitions.map((definition) => toOrgTool(definition, { deadlineMs: options.deadlineMs }));
  const registry: OrgToolRegistry = buildMcpToolRegistry<OrgMcpCall, OrgTool>(tools, ctx.log);
  const workTools = definitions.filter((definition) => definition.effect === 'work').map((definition) => definition.name);
  const tasks = operationTasks({ ctx, workTools, blockMs: options.deadlineMs ?? TOOL_DEADLINE_MS });
  const principals = new WeakMap<object, OrgPrincipal>();
  const present = orgToolPresentation(ctx.config.publicUrl);
  const apps = orgApps(ctx);

  app.register(async (scope) => {
    // Bearer refusals keep the SDK's answer (challenge header and OAuth error body); the rest as usual.
    scope.setErrorHandler((error, request, reply) => {
      if (error instanceof BearerRefusal) return sendWebResponse(reply, error.answer);
      return sendError(toAppError(error, request), reply);
    });

    scope.addHook('preHandler', async (request, reply) => {
      const principal = principals.get(request);
      if (request.method !== 'POST' || !principal || typeof request.body !== 'string') return;
      const messages = parseJson(request.body);
      // Unparsable bodies and oversized batches are the endpoint's to refuse (400, 413).
      if (messages === undefined || (Array.isArray(messages) && messages.length > MAX_BATCH_LENGTH)) return;
      const missing = findMissingScope(messages, principal.scopes, (tool) => registry.find(tool)?.scope);
      if (!missing) return;
      const answer = insufficientScopeAnswer(missing, resourceMetadataUrl(ctx.config));
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    });

    registerMcpEndpoint<OrgPrincipal>(scope, {
      path: ORG_MCP_PATH,
      db: ctx.db,
      sessionScope: ORG_MCP_SESSION_SCOPE,
      // Sessions kept in memory, dropped on every process when one ends (DELETE /mcp).
      changes: ctx.changes,
      serverInfo: orgServerInfo({ ...ORG_MCP_INFO }, ctx.config.publicUrl),
      capabilities: { tools: {} },
      protocolVersions: ORG_MCP_PROTOCOLS,
      modernProtocolVersions: ORG_MCP_MODERN_PROTOCOLS,
      hosts: { publicUrls: [ctx.config.publicUrl, ctx.config.authPublicUrl], bindHost: ctx.config.host },
      maxBatchLength: MAX_BATCH_LENGTH,
      async authenticate(request) {
        // What this process keeps (verified tokens, sessions, spaces, settled operations) answers the request only
        // once it has heard every change committed before it: a token revoked or a session ended on another
        // process a moment ago is refused here too (DESIGN 6).
        await ctx.changes.caughtUp();
        const principal = await authenticateBearer(ctx, request);
        principals.set(request, principal);
        return principal;
      },
      // A session belongs to the person and client it was opened for.
      principalId: (principal) => `${principal.personId} ${principal.clientId}`,
      installHandlers: (server, call) => installToolHandlers(server, registry, { tasks, apps }, present(call.client, registry.tools), ctx, call),
    });
  });
}

function installToolHandlers(
  server: Server,
  registry: OrgToolRegistry,
  { tasks, apps }: { tasks: OperationTasks; apps: OrgApps },
  tools: readonly Tool[],
  ctx: OrgContext,
  { principal, http, client }: McpCall<OrgPrincipal>,
): void {
  const call = { ctx, principal, http };
  const run = (name: string, args: Record<string, unknown> | undefined) => registry.call(name, args, call);
  // In the registry's order (orgTools), with the presentation of the client's revision (presentation.ts), the
  // links to the MCP Apps for a client that renders them and, where the revision has tasks, the work tools' task support.
  server.setRequestHandler('tools/list', () => ({ tools: [...tasks.listed(client, apps.link(client, tools))] }));
  apps.install(server, client, principal);
  // W3C Trace Context: a `traceparent` in the call's `_meta` wins over the HTTP request's header (the current one).
  // A call run as a task is followed through the task (whose input_required names the decision); any other call
  // that pauses points the person at the decision page (decision-reach.ts).
  server.setRequestHandler('tools/call', (request, context) =>
    withTraceparent(parseTraceparent(request.params._meta?.traceparent) ?? currentTraceparent(), () =>
      tasks.callTool(request.params, client, run, async () => {
        const result = await callToolReachingThePerson(registry, request.params, call, { client, origin: ctx.config.publicUrl, requestState: context.mcpReq.requestState<string>() });
        return isInputRequiredResult(result) ? result : apps.withAppData(request.params.name, result, { client, principal });
      }),
    ),
  );
  tasks.install(server, client, principal, run);
}

async function sendWebResponse(reply: FastifyReply, answer: Response): Promise<FastifyReply> {
  reply.code(answer.status);
  answer.headers.forEach((value, name) => void reply.header(name, value));
  // No body at all (RFC 6750 §3.1's bare challenge), rather than an empty text/plain one.
  return answer.body ? reply.send(await answer.text()) : reply.send();
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
