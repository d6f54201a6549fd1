/**
 * Operations as MCP tasks (issue 21 item 2, DESIGN 4.9): the tools that start an operation (`effect: 'work'`: ask,
 * message_agent, execute_capability) hand a task to a client that asks for one, and the task *is* the operation —
 * its id is the operation id, nothing new is stored, and any process answers for it because the operation lives in
 * the database. A client that does not ask gets today's answers (`wait_seconds`, `get_operation`).
 *
 * Protocol 2025-11-25 ("Tasks", basic/utilities/tasks): the server declares `tasks` (list, cancel, task-augmented
 * `tools/call`), the work tools `execution.taskSupport: "optional"`; a `tools/call` carrying `params.task` answers a
 * `CreateTaskResult` at once, and `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` follow it. Clients
 * speaking 2025-06-18 see none of this: `params.task` is ignored there, as that revision has no tasks.
 *
 * Protocol 2026-07-28, the Tasks extension `io.modelcontextprotocol/tasks` (ext-tasks, specification/draft/tasks.md):
 * the server lists the extension in `server/discover`; a client that names it in a request's capabilities gets the
 * work tools' answer as a `CreateTaskResult` (`resultType: "task"`), then `tasks/get` (the result or error inline,
 * the decision page as a URL-mode elicitation among `inputRequests` for a client that takes those), `tasks/update`
 * and `tasks/cancel` (both acknowledged with an empty result). There is no `tasks/list` or `tasks/result` there.
 *
 * Statuses: queued and running → `working`; paused for a person → `input_required`, its message naming the decision
 * and its page; succeeded → `completed`; failed → `failed`; cancelled → `cancelled`. Tasks are bound to the person,
 * as `get_operation` is (another person's operation is "not found"), and like it need no scope beyond a valid token.
 */
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type CallToolRequest,
  type CallToolResult,
  type Server,
  type ServerContext,
  type Task,
  type Tool,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { McpClient } from '../../platform/mcp/endpoint.js';
import { cursorParts, decodeOpaqueCursor, encodeOpaqueCursor } from '../../platform/paging.js';
import { isAppError } from '../../platform/errors.js';
import type { OrgContext } from '../context.js';
import { decisionPageUrl } from '../decisions/page-url.js';
import { takesUrlElicitation } from './decision-reach.js';
import { listOperations } from '../operations/list.js';
import { awaitSettled, cancelOperation, findOperations, getOperation, toOperationRecord, type OperationRecord } from '../operations/operations.js';
import { SETTLED_STATUSES, type OperationStatus } from '../operations/states.js';

/** The revision whose clients get tasks through task-augmented requests. */
const AUGMENTED_REVISION = '2025-11-25';
/** The revision whose clients get tasks through the Tasks extension, and the extension's name. */
const EXTENSION_REVISION = '2026-07-28';
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** What a client should wait between two `tasks/get` (the spec's `pollInterval`). */
export const TASK_POLL_INTERVAL_MS = 2_000;
/** Tasks per `tasks/list` page. */
const TASKS_PAGE = 50;
/** 2025-11-25 "Creating Tasks": a text the host may hand the model at once while the task runs. */
const MODEL_IMMEDIATE_RESPONSE = 'io.modelcontextprotocol/model-immediate-response';

const TASK_STATUS: Record<OperationStatus, Task['status']> = {
  queued: 'working',
  running: 'working',
  paused: 'input_required',
  succeeded: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** Runs one org tool for the caller, as `tools/call` does (the registry's rules, its JSON result). */
export type RunTool = (name: string, args: Record<string, unknown> | undefined) => Promise<CallToolResult>;

export interface OperationTasks {
  /** The `tools/list` answer for this client: work tools say they may run as tasks (2025-11-25). */
  listed(client: McpClient, tools: readonly Tool[]): readonly Tool[];
  /**
   * A `tools/call`: a task-augmented call of a work tool starts its operation (through `run`) and answers the
   * task; any other call is answered by `otherwise`.
   */
  callTool<Other>(params: CallToolRequest['params'], client: McpClient, run: RunTool, otherwise: () => Promise<Other>): Promise<CallToolResult | Other>;
  /** Declares the tasks capability and installs the `tasks/*` methods for a client whose revision has them. */
  install(server: Server, client: McpClient, caller: { personId: string }, run: RunTool): void;
}

const taskIdParams = z.object({ taskId: z.string().min(1).max(200) }).passthrough();
const listParams = z.object({ cursor: z.string().max(400).optional() }).passthrough();

export function operationTasks(options: {
  ctx: OrgContext;
  /** The tools that start operations, by name. */
  workTools: readonly string[];
  /** How long `tasks/result` blocks at most (spec 7.1: the 25-second budget of every call). */
  blockMs: number;
}): OperationTasks {
  const { ctx, blockMs } = options;
  const workTools = new Set(options.workTools);
  const origin = ctx.config.publicUrl;
  const augmentedLists = new WeakMap<readonly Tool[], readonly Tool[]>();
  const task = (operation: OperationRecord) => toTask(operation, origin);

  /** The Tasks extension's methods (2026-07-28): each refuses a client that did not name the extension (-32021). */
  function installExtension(server: Server, client: McpClient, read: (taskId: string) => Promise<OperationRecord>, run: RunTool): void {
    server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
    const declared = () => {
      if (!declaresTasks(client)) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    };

    server.setRequestHandler('tasks/get', { params: taskIdParams }, async ({ taskId }) => {
      declared();
      const operation = await read(taskId);
      const current = extensionTask(task(operation));
      switch (current.status) {
        case 'completed':
          return { ...current, result: await run('get_operation', { operation_id: taskId }) };
        case 'failed':
          // The extension wants a JSON-RPC error here; the operation as get_operation shows it rides in its data.
          return { ...current, error: { code: ProtocolErrorCode.InternalError, message: current.statusMessage ?? 'the operation failed', data: { operation } } };
        case 'input_required':
          return { ...current, inputRequests: decisionRequests(operation, client, origin) };
        default:
          return current;
      }
    });

    // The answer to the decision page's URL request is only the client's consent to open it: the person decides
    // on the page, so there is nothing to take from it. Acknowledged, as the extension asks.
    server.setRequestHandler('tasks/update', { params: taskIdParams }, async ({ taskId }) => {
      declared();
      await read(taskId);
      return {};
    });

    // Cooperative: an unfinished task is cancelled, an ended one stays as it ended; either way an empty answer.
    server.setRequestHandler('tasks/cancel', { params: taskIdParams }, async ({ taskId }) => {
      declared();
      const operation = await read(taskId);
      if (!SETTLED_STATUSES.includes(operation.status)) await cancelOperation(ctx.db, taskId).catch(ignoreEnded);
      return {};
    });
  }

  return {
    listed(client, tools) {
      if (client.protocolVersion !== AUGMENTED_REVISION) return tools;
      let listed = augmentedLists.get(tools);
      if (!listed) {
        listed = tools.map((tool) => (workTools.has(tool.name) ? { ...tool, execution: { taskSupport: 'optional' as const } } : tool));
        augmentedLists.set(tools, listed);
      }
      return listed;
    },

    async callTool(params, client, run, otherwise) {
      const augmented = params.task !== undefined && client.protocolVersion === AUGMENTED_REVISION;
      const extended = client.protocolVersion === EXTENSION_REVISION && declaresTasks(client) && workTools.has(params.name);
      if (!augmented && !extended) return otherwise();
      // 2025-11-25 "Tool-Level Negotiation": a tool without taskSupport called as a task is -32601.
      if (!workTools.has(params.name)) throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `the tool ${params.name} does not run as a task`);
      // The operation is started and answered as it stands, at once: the task is how the client follows it.
      const result = await run(params.name, { ...params.arguments, wait_seconds: 0 });
      const operation = result.structuredContent as OperationRecord | undefined;
      // A refusal started nothing, and neither did a dry run: those answer as they always do.
      if (result.isError || typeof operation?.operation_id !== 'string') return result;
      const started = task(operation);
      // The extension's CreateTaskResult is the task itself, told apart by its resultType.
      if (extended) return { resultType: 'task', ...extensionTask(started) } as unknown as CallToolResult;
      // The SDK checks a 2025 tools/call answer as a CallToolResult, so the CreateTaskResult keeps the tool's usual
      // content beside `task` (results are open objects): the answer is both, and a client reads the one it asked for.
      return {
        ...result,
        task: started,
        _meta: { [MODEL_IMMEDIATE_RESPONSE]: `Started ${operation.operation_id} as a task (${started.status}); the client follows it.` },
      };
    },

    install(server, client, caller, run) {
      const read = (taskId: string) => getOperation(ctx.db, taskId, caller.personId).catch(taskNotFound);
      if (client.protocolVersion === EXTENSION_REVISION) return installExtension(server, client, read, run);
      if (client.protocolVersion !== AUGMENTED_REVISION) return;
      server.registerCapabilities({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } });

      server.setRequestHandler('tasks/get', { params: taskIdParams }, async ({ taskId }) => task(await read(taskId)));

      // "Result Retrieval": blocks until the task ends, then answers what get_operation answers for the operation.
      server.setRequestHandler('tasks/result', { params: taskIdParams }, async ({ taskId }, extra: ServerContext) => {
        await read(taskId);
        let told: string | undefined;
        const ended = await awaitSettled(ctx, taskId, caller.personId, {
          ms: blockMs,
          signal: extra.mcpReq.signal,
          // "Task Status Notification": told on the response stream (SSE) at each change while the client waits.
          seen: (operation) => {
            const now = task(operation);
            if (told !== undefined && told !== now.status) void extra.mcpReq.notify({ method: 'notifications/tasks/status', params: now }).catch(() => {});
            told = now.status;
          },
        });
        if (!SETTLED_STATUSES.includes(ended.status)) {
          throw new ProtocolError(
            ProtocolErrorCode.InternalError,
            `the task is still ${TASK_STATUS[ended.status]} after ${Math.round(blockMs / 1000)} s: poll tasks/get, and ask tasks/result again once it has ended`,
            { task: task(ended) },
          );
        }
        const result = await run('get_operation', { operation_id: taskId });
        return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
      });

      server.setRequestHandler('tasks/list', { params: listParams }, async ({ cursor }) => {
        const before = cursor === undefined ? undefined : decodeCursor(cursor);
        const page = await listOperations(ctx.db, { all: false, personId: caller.personId, spaceIds: [] }, {}, { limit: TASKS_PAGE, before });
        const rows = await findOperations(ctx.db, page.rows.map((row) => row.id));
        return {
          tasks: rows.map((row) => task(toOperationRecord(row))),
          ...(page.next ? { nextCursor: encodeOpaqueCursor([page.next.createdAt, page.next.id]) } : {}),
        };
      });

      // "Task Cancellation": an ended task is refused with -32602; a cancelled one stays cancelled.
      server.setRequestHandler('tasks/cancel', { params: taskIdParams }, async ({ taskId }) => {
        const operation = await read(taskId);
        if (SETTLED_STATUSES.includes(operation.status)) throw alreadyEnded(TASK_STATUS[operation.status]);
        try {
          return task(toOperationRecord(await cancelOperation(ctx.db, taskId)));
        } catch (error) {
          // It ended between the read and the move: the table's refusal names the status it ended in.
          if (isAppError(error) && error.code === 'invalid_state') throw alreadyEnded(TASK_STATUS[(await read(taskId)).status]);
          throw error;
        }
      });
    },
  };
}

/** The operation as a 2025-11-25 `Task`. Operations are kept for good, so the `ttl` is unlimited (null). */
export function toTask(operation: OperationRecord, origin: string): Task {
  const statusMessage = statusMessageOf(operation, origin);
  return {
    taskId: operation.operation_id,
    status: TASK_STATUS[operation.status],
    ...(statusMessage ? { statusMessage } : {}),
    createdAt: operation.created_at,
    lastUpdatedAt: operation.updated_at,
    ttl: null,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

function statusMessageOf(operation: OperationRecord, origin: string): string | undefined {
  switch (operation.status) {
    case 'paused':
      return `Waiting for a person's decision ${operation.decision_id}: ${decisionPageUrl(origin, operation.decision_id ?? '')}`;
    case 'failed':
      return operation.error ? `${operation.error.code}: ${operation.error.message}` : undefined;
    case 'queued':
    case 'running':
      return operation.progress.at(-1)?.message;
    default:
      return undefined;
  }
}

/** 2025-11-25 "Protocol Errors": an unknown task (or another person's) is -32602. */
function taskNotFound(error: unknown): never {
  if (isAppError(error) && error.code === 'not_found') throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
  throw error;
}

function alreadyEnded(status: Task['status']): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${status}'`);
}

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  const parts = decodeOpaqueCursor(cursor, [cursorParts.instant, cursorParts.text]);
  if (!parts) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor: pass the nextCursor of the previous tasks/list page');
  return { createdAt: parts[0] as string, id: parts[1] as string };
}

/** A task as the Tasks extension shapes it: `ttlMs` and `pollIntervalMs` instead of 2025-11-25's names. */
function extensionTask({ ttl, pollInterval, ...task }: Task) {
  return { ...task, ttlMs: ttl, pollIntervalMs: pollInterval };
}

function declaresTasks(client: McpClient): boolean {
  const extensions = client.capabilities.extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

/**
 * What a paused operation waits for, as the extension's `inputRequests`: the decision page as a URL-mode
 * elicitation (its id the decision's) for a client that declared URL elicitation; none for any other, whose
 * status message names the page instead.
 */
function decisionRequests(operation: OperationRecord, client: McpClient, origin: string): Record<string, unknown> {
  if (!operation.decision_id || !takesUrlElicitation(client)) return {};
  return {
    [`decision:${operation.decision_id}`]: {
      method: 'elicitation/create',
      params: {
        mode: 'url',
        elicitationId: operation.decision_id,
        url: decisionPageUrl(origin, operation.decision_id),
        message: 'A person decides on this action in their own browser: open the decision page to approve or deny it.',
      },
    },
  };
}

/** A cancel that lost to the operation ending is no error: it stays as it ended. */
function ignoreEnded(error: unknown): void {
  if (!(isAppError(error) && error.code === 'invalid_state')) throw error;
}
