/**
 * How an org MCP tool is defined, and the registry that enforces every rule tools share (DESIGN 4.3, 4.4), so
 * that no tool repeats one:
 *
 * - the OAuth scope, as data on the tool (checked at the HTTP level by scope-check.ts, spec 7.1);
 * - the space rule: a tool that places or reads work (`needsSpace`) refuses with `no_space` when the person
 *   belongs to no space (spec 4.2 rule 2), and a `space_id` argument outside the person's spaces is
 *   `not_found`, like any id the caller may not see;
 * - `idempotency_key` on every tool that changes something (`effect: 'write'` or `'work'`), handled by
 *   operations/idempotency.ts: the tool's writes run in the key's transaction (`call.db`), with the call's
 *   `tool.called` activity entry;
 * - `wait_seconds` on tools that start work (`effect: 'work'`): `run` starts an operation and returns its id,
 *   the registry waits up to that long and returns the operation;
 * - no argument holds text PostgreSQL cannot store or JSON nested past 64 levels (org/fields.ts gives each
 *   field these rules; the registry checks them again, so a tool that forgot one still answers invalid_request);
 * - the 25-second deadline of every call (spec 7.1): past it the call answers HTTP 500 while its work goes on,
 *   and the retry with the same key returns what the work produced.
 *
 * Every tool declares its result's schema: `outputSchema` in `tools/list`, and each result carries the same
 * object as `structuredContent` beside its JSON text (platform/mcp/tools.ts).
 */
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Scope } from '../../auth/index.js';
import type { Queryable } from '../../platform/database.js';
import { MAX_JSON_DEPTH, textProblem, walkJson } from '../../platform/json-depth.js';
import type { McpTool, McpToolRegistry } from '../../platform/mcp/tools.js';
import type { OrgContext } from '../context.js';
import { orgErrors } from '../errors.js';
import { id } from '../fields.js';
import { withIdempotencyKey, type Produced } from '../operations/idempotency.js';
import { awaitOperation, enteredAtStart, operationRecord, runStartedHere, startingHere } from '../operations/operations.js';
import type { Changed } from '../../auth/index.js';
import type { Change } from '../../platform/changes.js';
import { cachedOrgRead } from '../read-cache.js';
import { listSpaceIdsOfPerson } from '../spaces/records.js';
import { recordActivity, type NewActivity } from '../activity/records.js';

/** Who is calling, from the verified access token. */
export interface OrgPrincipal {
  personId: string;
  clientId: string;
  grantId: string;
  scopes: string[];
}

/** What a tool's `run` may use besides its arguments. */
export interface OrgToolCall {
  ctx: OrgContext;
  principal: OrgPrincipal;
  /** The person's spaces, loaded for tools with `needsSpace` (empty otherwise). */
  spaceIds: readonly string[];
  /** Where to read and write: for `write` and `work` tools, the idempotency key's transaction. */
  db: Queryable;
  /** Reports what a write changed, announced on the change feed in its transaction (changes.ts); reads report nothing. */
  changed: Changed;
}

/** What the MCP endpoint hands the registry per call. */
export interface OrgMcpCall {
  ctx: OrgContext;
  principal: OrgPrincipal;
  /** The HTTP answer's status, raised to 500 when the deadline passes (platform/mcp/endpoint.ts). */
  http: { status?: number };
}

/** `read` changes nothing; `write` changes records and returns one; `work` starts an operation. */

interface ToolBase<Input extends z.ZodObject> {
  name: string;
  description: string;
  /** The scope a token must hold; null when any valid token may call the tool (service_context, get_operation). */
  scope: Scope | null;
  /** Places or reads work in spaces: refused with `no_space` when the person has none. */
  needsSpace: boolean;
  /** A strict object schema of the tool's own arguments (the registry adds `idempotency_key`, `wait_seconds`). */
  input: Input;
  /** Hints beyond `readOnlyHint`, which follows from `effect`. */
  annotations?: Omit<ToolAnnotations, 'readOnlyHint'>;
}

export interface RecordTool<Input extends z.ZodObject, Output extends z.ZodObject> extends ToolBase<Input> {
  effect: 'read' | 'write';
  output: Output;
  run(args: z.output<Input>, call: OrgToolCall): Promise<z.input<Output>>;
  /**
   * What a write made, for its `tool.called` entry: the record's id as the subject and the space it is in. By
   * default the result's own `id` and `space_id` (a task, a memory item); a result that wraps its record says which.
   */
  madeOf?(result: z.input<Output>): Made;
}

/** The record a write tool made or changed, as its `tool.called` entry names it. */
interface Made {
  id: string | null;
  spaceId: string | null;
}

export interface WorkTool<Input extends z.ZodObject> extends ToolBase<Input> {
  effect: 'work';
  /**
   * Starts the operation in `call.db` and returns its id — or, for a call that starts nothing (a dry run),
   * `{ result }`, returned as it is. It runs in the call's transaction when there is one (see `startsNothing`).
   */
  run(args: z.output<Input>, call: OrgToolCall): Promise<string | { result: unknown }>;
  /**
   * True for a call that starts nothing (a dry run). A call that starts an operation writes once — the start,
   * with the call's `tool.called` entry — so without an idempotency key it runs outside a transaction; one that
   * starts nothing writes what it found and its entry, in a transaction.
   */
  startsNothing?: (args: z.output<Input>) => boolean;
  /** The result's schema when `run` may answer without an operation; it must accept the operation record too. */
  output?: z.ZodObject;
}

/** A tool as the registry serves it: a platform MCP tool that also carries its scope. */
export interface OrgTool extends McpTool<OrgMcpCall> {
  scope: Scope | null;
}

export type OrgToolRegistry = McpToolRegistry<OrgMcpCall, OrgTool>;

/** DESIGN 4.3: 1–200 characters. */
const idempotencyKey = id().optional().describe(
  'Send the same key to retry this call safely: the retry returns the original result or operation instead of doing it twice (kept 24 hours).',
);
/** DESIGN 4.3: 0–20, default 5. */
const waitSeconds = z.number().int().min(0).max(20).default(5).describe(
  'How long to wait for the work to finish before returning the operation as it stands (then poll get_operation).',
);
/** Spec 7.1. */
export const TOOL_DEADLINE_MS = 25_000;

export function defineOrgTool<Input extends z.ZodObject, Output extends z.ZodObject>(tool: RecordTool<Input, Output>): OrgToolDefinition;
export function defineOrgTool<Input extends z.ZodObject>(tool: WorkTool<Input>): OrgToolDefinition;
export function defineOrgTool(tool: OrgToolDefinition): OrgToolDefinition {
  const spaceArgument = 'space_id' in tool.input.shape;
  if (spaceArgument && !tool.needsSpace) throw new Error(`org tool ${tool.name} takes space_id, so it needs a space`);
  return tool;
}

export type OrgToolDefinition = RecordTool<z.ZodObject, z.ZodObject> | WorkTool<z.ZodObject>;

/** The registry's face of each definition: its full arguments, result schema and the shared rules around `run`. */
export function toOrgTool(definition: OrgToolDefinition, options: { deadlineMs?: number } = {}): OrgTool {
  const deadlineMs = options.deadlineMs ?? TOOL_DEADLINE_MS;
  const input =
    definition.effect === 'read'
      ? definition.input
      : definition.input.extend({ idempotency_key: idempotencyKey, ...(definition.effect === 'work' ? { wait_seconds: waitSeconds } : {}) });
  return {
    name: definition.name,
    description: definition.description,
    scope: definition.scope,
    input,
    output: definition.effect === 'work' ? (definition.output ?? operationRecord) : definition.output,
    annotations: { readOnlyHint: definition.effect === 'read', ...definition.annotations },
    run: (args, call) => withinDeadline(call, deadlineMs, () => runTool(definition, args as Record<string, unknown>, call)),
  };
}

async function runTool(definition: OrgToolDefinition, args: Record<string, unknown>, { ctx, principal }: OrgMcpCall): Promise<unknown> {
  // The fields of org/fields.ts refuse these, naming the field; this catches an argument declared without them.
  const { problem, path } = walkJson(args, MAX_JSON_DEPTH + 1, textProblem);
  if (problem) throw orgErrors.invalidArgument(path?.length ? path.join('.') : '(arguments)', problem);
  const { idempotency_key: key, wait_seconds: wait, ...own } = args;
  // Read on every call of such a tool, so kept in memory until the directory changes (read-cache.ts).
  const { personId } = principal;
  const spaceIds = definition.needsSpace ? await cachedOrgRead(ctx, ctx.db, 'directory', 'spaceIdsOfPerson', { personId }, () => listSpaceIdsOfPerson(ctx.db, personId)) : [];
  if (definition.needsSpace && spaceIds.length === 0) throw orgErrors.noSpace();
  if (typeof own.space_id === 'string' && !spaceIds.includes(own.space_id)) throw orgErrors.notFound('space');
  const call: OrgToolCall = { ctx, principal, spaceIds, db: ctx.db, changed: readsChangeNothing };
  if (definition.effect === 'read') return definition.run(own, call);

  const keyed = { personId: principal.personId, clientId: principal.clientId, key: key as string | undefined, tool: definition.name, args: own };
  const changes: Change[] = [];
  const produce = async (db: Queryable): Promise<Produced> => {
    const outcome = await definition.run(own, { ...call, db, changed: (change) => void changes.push(change) });
    const produced: Produced =
      definition.effect !== 'work' ? { result: outcome } : typeof outcome === 'string' ? { operationId: outcome } : (outcome as { result: unknown });
    if (!('operationId' in produced && enteredAtStart(produced.operationId))) await recordActivity(db, toolActivity(definition, own, principal, produced));
    if (changes.length > 0) await ctx.changes.announce(db, changes);
    return produced;
  };
  // The call's writes and its activity entry commit together; a replayed key produces (and records) nothing.
  // A work call that starts an operation writes once (WorkTool `startsNothing`): without a key, no transaction.
  const writesOnce = definition.effect === 'work' && key === undefined && !definition.startsNothing?.(own);
  // A work call's entry is about the operation it starts, so it is written with that start; a write call that also
  // starts one (create_task with an agent) writes its own entry in `produce`, about what it made.
  const calledEntry = definition.effect === 'work' ? (operationId: string) => toolActivity(definition, own, principal, { operationId }) : undefined;
  const { value: produced, started } = await startingHere(() => (writesOnce ? produce(ctx.db) : withIdempotencyKey(ctx.db, keyed, produce)), { calledEntry });
  // Committed: this process's caches hear of it before the call answers (platform/changes.ts `transact`).
  if (changes.length > 0) ctx.changes.deliver(changes);
  // Committed: what the call started runs here while the caller waits (none for a replayed key).
  const runningHere = runStartedHere(started);
  if ('operationId' in produced) return awaitOperation(ctx, produced.operationId, principal.personId, wait as number, runningHere);
  return produced.result;
}

function readsChangeNothing(): never {
  throw new Error('a read tool reported a change: make it a write tool');
}

/**
 * The `tool.called` entry of a tool that wrote or started work: who called it through which client, in which
 * space, and what it produced (the operation, or the record it made or changed and that record's space when the
 * call named none: answer_task's task is in a space though the call takes only its id).
 */
function toolActivity(definition: OrgToolDefinition, args: Record<string, unknown>, principal: OrgPrincipal, produced: Produced): NewActivity {
  const made = 'result' in produced ? madeBy(definition, produced.result) : { id: null, spaceId: null };
  const spaceId = typeof args.space_id === 'string' ? args.space_id : made.spaceId;
  return {
    kind: 'tool.called',
    summary: `called ${definition.name}`,
    spaceId,
    personId: principal.personId,
    clientId: principal.clientId,
    operationId: 'operationId' in produced ? produced.operationId : null,
    subject: 'operationId' in produced ? produced.operationId : made.id,
    details: { tool: definition.name, arguments: args },
  };
}

function madeBy(definition: OrgToolDefinition, result: unknown): Made {
  if (result === null || typeof result !== 'object') return { id: null, spaceId: null };
  const record = result as Record<string, unknown>;
  if (definition.effect !== 'work' && definition.madeOf) return definition.madeOf(record);
  return { id: typeof record.id === 'string' ? record.id : null, spaceId: typeof record.space_id === 'string' ? record.space_id : null };
}

/**
 * Spec 7.1: a tool past its deadline answers HTTP 500; its work is not interrupted (a transaction still commits,
 * an operation still runs), so the client's retry with the same idempotency key finds what it produced.
 */
async function withinDeadline<T>(call: OrgMcpCall, deadlineMs: number, work: () => Promise<T>): Promise<T> {
  const running = work();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      call.http.status = 500;
      // Whatever the work ends with now is no one's answer; keep it from being an unhandled rejection.
      running.catch((error) => call.ctx.log.warn({ err: error }, 'org tool failed after its deadline passed'));
      reject(orgErrors.deadlinePassed(Math.round(deadlineMs / 1000)));
    }, deadlineMs);
  });
  try {
    return await Promise.race([running, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
