/**
 * Operations (spec 3.4, DESIGN 4.4): work a tool started and a client follows with `get_operation`.
 *
 * Starting one writes the `queued` row and its job in one statement. A caller that waits for the work (a tool,
 * the agent API) runs it itself right after that commits, its job claimed and the operation written `running` in
 * that statement (`startingHere`); any other job goes to whichever process claims it first (platform/jobs.ts:
 * `FOR UPDATE SKIP LOCKED`, leases), whose run moves the operation to `running`. The run hands it to the runner
 * of its kind. A runner returns how the work stands — succeeded, failed, paused on a decision, or still
 * running elsewhere (an agent that answers later through the agent API) — and that outcome is applied with
 * `move()`. A process that dies mid-run leaves the job leased; when the lease passes another process runs it
 * again, so runners must be safe to repeat. The database announces every status change and every queued job
 * (a trigger, on commit), which wakes the callers waiting on it and the job workers (watch.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { eq, inArray, sql, type SQL, type WithSubquery } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import { isAppError } from '../../platform/errors.js';
import { fixedInsert } from '../../platform/fixed-statement.js';
import { ignoreLostRace } from '../../platform/state-table.js';
import { jobKind, type ClaimedHere, type JobHandler, type JobInfo } from '../../platform/jobs.js';
import { toIso } from '../../platform/time.js';
import { currentTraceparent, withTraceparent } from '../../platform/trace.js';
import { activityStatement, recordActivity, type NewActivity } from '../activity/records.js';
import type { OrgContext } from '../context.js';
import { OPERATION_FAILURES, orgErrors, type OperationFailure } from '../errors.js';
import { newId } from '../ids.js';
import { shownClientName } from '../../auth/clients.js';
import { oauthClients } from '../../auth/schema.js';
import { decisions, operations, people } from '../schema.js';
import { isAnswered, move, operationActivity, OPERATION_KINDS, OPERATION_STATUSES, SETTLED_STATUSES, type OperationKind, type OperationRow, type OperationStatus } from './states.js';

export const operationError = z.object({ code: z.string(), message: z.string() });
export type OperationError = z.infer<typeof operationError>;

export const progressEvent = z.object({
  at: z.string(),
  message: z.string(),
  percent: z.number().min(0).max(100).optional(),
});

/**
 * Who resolved a decision: always a person, and where — `inbox` (the web page) or `client` (through that MCP
 * client); `unrecorded` for decisions resolved before this was kept. The record never says a person decided in
 * the inbox when they did it through a client.
 */
export const resolvedByRecord = z.object({
  person_id: z.string(),
  name: z.string(),
  via: z.enum(['inbox', 'client', 'unrecorded']),
  client: z.object({ id: z.string(), name: z.string().nullable() }).optional(),
});
export type ResolvedByRecord = z.infer<typeof resolvedByRecord>;

export function toResolvedBy(personId: string, name: string, via: string | null, clientName: string | null): ResolvedByRecord {
  if (via === 'inbox') return { person_id: personId, name, via: 'inbox' };
  if (via === null) return { person_id: personId, name, via: 'unrecorded' };
  return { person_id: personId, name, via: 'client', client: { id: via, name: shownClientName(clientName) } };
}

/** The operation as tools show it (DESIGN 4.3 "Shapes"); also every work tool's `outputSchema`. */
export const operationRecord = z.object({
  operation_id: z.string(),
  kind: z.enum(OPERATION_KINDS),
  status: z.enum(OPERATION_STATUSES),
  space_id: z.string().nullable(),
  agent_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  progress: z.array(progressEvent),
  result: z.unknown().optional(),
  error: operationError.optional(),
  decision_id: z.string().optional(),
  /** A paused operation's decision page, where its person approves or denies it (added by mcp/decision-reach.ts). */
  decision_url: z.string().optional(),
  /** get_operation: the decision the operation waited for, once resolved, with who resolved it and where. */
  decision: z.object({ status: z.string(), resolved_by: resolvedByRecord.optional(), note: z.string().optional() }).optional(),
});
export type OperationRecord = z.infer<typeof operationRecord>;

/**
 * How the work stands when a runner returns, and `entries`: what the run did outside the database (a connector's
 * call), recorded in the statement that applies the outcome, whatever that move comes to.
 */
export type RunnerOutcome = (
  | { status: 'succeeded'; result: unknown }
  | { status: 'failed'; error: OperationError }
  | { status: 'paused'; decisionId: string }
  /** The work goes on elsewhere; it ends through completeOperation / failOperation. */
  | { status: 'running' }
) & { entries?: [NewActivity, ...NewActivity[]] };

/** What the engine knows of a kind (kinds.ts): its name, and how to run a stored operation of it. */
export interface RegisteredKind {
  kind: OperationKind;
  /** `held`: what the start handed its run in this process (`NewOperation.held`); absent on any other run. */
  runStored(ctx: OrgContext, operation: OperationRow, held?: unknown): Promise<RunnerOutcome>;
}

export interface NewOperation {
  kind: OperationKind;
  personId: string;
  clientId: string | null;
  agentId?: string | null;
  spaceId?: string | null;
  input: Record<string, unknown>;
  /**
   * What the starter read that the run needs too (the agent a message goes to), handed to the run when it runs
   * in this process (`startingHere`); a run anywhere else reads it.
   */
  held?: unknown;
  /**
   * The run's first writes, made in the start's statement when the run is here (`startingHere`), given the new
   * operation's id: the writes, and what the run is then handed instead of `held`. A run anywhere else (a queued
   * start, a rerun after a crash) makes them itself, so they must be ones the runner finds already made.
   */
  firstWrites?: (operationId: string) => { writes: SQL[]; held: unknown };
}

/**
 * The row an operation's start writes (its times and the rest are the table's defaults). Fixed: drizzle's insert
 * builder made and rendered every column of the table on each start (bench/RESULTS.md, session 53).
 */
const insertOperation = fixedInsert(operations, ['id', 'kind', 'status', 'personId', 'clientId', 'agentId', 'spaceId', 'input', 'traceparent']);

/** Started here, the run is handed the queued row its start wrote (no read of what was just written). */
const runOperation = jobKind<{ operation_id: string }, { written: OperationRow; held: unknown }>('org.operation');

/**
 * Work started by a caller that waits for it (a tool with `wait_seconds`, the agent API) runs in the process
 * that started it, right after the start commits, rather than in whichever worker a notification wakes first:
 * its job is enqueued already claimed here (platform/jobs.ts `enqueueHere`). `startingHere` collects what
 * `work` starts; the caller runs it with `runStartedHere` once what `work` wrote has committed. `calledEntry`:
 * the caller's own entry about the call (a tool's `tool.called`), written in the statement of the first
 * operation `work` starts, after its `operation.started` (`enteredAtStart` says whether it was).
 */
interface StartingHere {
  started: ClaimedHere[];
  open: boolean;
  calledEntry?: (operationId: string) => NewActivity;
  /** The operation whose start wrote `calledEntry`. */
  enteredWith?: string;
}

const startedHere = new AsyncLocalStorage<StartingHere>();

export async function startingHere<T>(
  work: () => Promise<T>,
  { calledEntry }: { calledEntry?: (operationId: string) => NewActivity } = {},
): Promise<{ value: T; started: ClaimedHere[] }> {
  const collecting: StartingHere = { started: [], open: true, calledEntry };
  try {
    return { value: await startedHere.run(collecting, work), started: collecting.started };
  } finally {
    // Something `work` left running that starts an operation later is queued as any other.
    collecting.open = false;
  }
}

/** Inside `startingHere`'s work: whether the start of `operationId` wrote the caller's `calledEntry`. */
export function enteredAtStart(operationId: string): boolean {
  return startedHere.getStore()?.enteredWith === operationId;
}

/** Runs what `startingHere` collected; resolves when all of it has run, undefined when there is nothing. */
export function runStartedHere(started: ClaimedHere[]): Promise<void> | undefined {
  if (started.length === 0) return undefined;
  return Promise.all(started.map((job) => job.run())).then(() => undefined);
}

/**
 * Writes the queued operation, its job and its `operation.started` entry (then the caller's `calledEntry`, see
 * `startingHere`, `operation.running` and the run's `firstWrites` when it runs here) in `db`, in one statement;
 * returns the operation's id (kinds.ts `start`). The operation keeps the current trace, which its runs and
 * deliveries carry on.
 */
export async function startOperation(ctx: OrgContext, db: Queryable, request: NewOperation): Promise<string> {
  const { held, firstWrites, ...start } = request;
  const queued = {
    id: newId('op'),
    kind: start.kind,
    status: 'queued' as const,
    personId: start.personId,
    clientId: start.clientId,
    agentId: start.agentId ?? null,
    spaceId: start.spaceId ?? null,
    input: start.input,
    traceparent: currentTraceparent() ?? null,
  };
  // The row as this statement writes it (its times are the database's; only the run's start reads this copy).
  const now = new Date().toISOString();
  const written: OperationRow = { ...queued, progress: [], result: null, error: null, decisionId: null, createdAt: now, updatedAt: now, finishedAt: null, chargedAt: null };
  const payload = { operation_id: queued.id };
  const here = startedHere.getStore();
  if (!here?.open) {
    const alongside = [insertOperation.bind(queued), activityStatement({ entries: [operationActivity(written, 'operation.started')] })];
    await runOperation.enqueue(db, payload, { alongside });
    return queued.id;
  }
  // Run here right after the commit, its job claimed as it is written: the operation is written `running` with
  // its `operation.running` entry (the `start` move, states.ts), so the run begins without a statement of its own.
  // Should this process die first, the job's lease passes and any process runs it as after a crash mid-run.
  const running: OperationRow = { ...written, status: 'running' };
  const called = here.calledEntry && here.enteredWith === undefined ? here.calledEntry(queued.id) : undefined;
  const entries = [operationActivity(written, 'operation.started'), ...(called ? [called] : []), operationActivity(running, 'operation.running')];
  const first = firstWrites?.(queued.id);
  const alongside = [insertOperation.bind({ ...queued, status: 'running' }), activityStatement({ entries }), ...(first?.writes ?? [])];
  here.started.push(await runOperation.enqueueHere(ctx.jobs, db, payload, alongside, { written: running, held: first ? first.held : held }));
  if (called) here.enteredWith = queued.id;
  return queued.id;
}

/** Applies `event` (states.ts); the database wakes whoever waits on the operation. */
export const moveOperation = move;

/** The operation's id, or the operation as the caller read it (its move is then one statement: states.ts). */
export type OperationTarget = string | { held: OperationRow; told?: NewActivity[] };

export const completeOperation = (db: Queryable, target: OperationTarget, result: unknown, alongside?: WithSubquery[]) =>
  moveOperation(db, target, 'succeed', { result: result ?? null }, alongside);

export const failOperation = (db: Queryable, target: OperationTarget, error: OperationError, alongside?: WithSubquery[]) =>
  moveOperation(db, target, 'fail', { error }, alongside);

/** The catalogued failure of DESIGN 4.4 / 4.5 (`denied`, `expired`, `undeliverable`, …). */
export function failure(code: OperationFailure, message: string = OPERATION_FAILURES[code]): OperationError {
  return { code, message };
}

/** Cancels unfinished work (task cancel, MCP `tasks/cancel`); its runner's later outcome loses to it. */
export const cancelOperation = (db: Queryable, id: string) => moveOperation(db, id, 'cancel');

/** The decision was approved: back to running, and the runner is called again. */
export async function resumeOperation(db: Queryable, id: string): Promise<OperationRow> {
  const row = await moveOperation(db, id, 'resume');
  await runOperation.enqueue(db, { operation_id: id });
  return row;
}

/** Adds a progress event; refused once the operation has ended. */
export async function addProgress(db: Queryable, id: string, event: { message: string; percent?: number }): Promise<void> {
  const entry = { message: event.message, ...(event.percent === undefined ? {} : { percent: event.percent }) };
  await moveOperation(db, id, 'progress', {
    progress: sql`${operations.progress} || jsonb_build_array(jsonb_build_object('at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) || ${JSON.stringify(entry)}::jsonb)`,
  });
}

export async function findOperation(db: Queryable, id: string): Promise<OperationRow | undefined> {
  const [row] = await db.select().from(operations).where(eq(operations.id, id));
  return row;
}

/** The operations of these ids, in that order (ids not found are left out). */
export async function findOperations(db: Queryable, ids: readonly string[]): Promise<OperationRow[]> {
  if (ids.length === 0) return [];
  const rows = await db.select().from(operations).where(inArray(operations.id, [...ids]));
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** The person's own operation (DESIGN 4.3 get_operation); anyone else's is `not_found`. */
export async function getOperation(db: Queryable, id: string, personId: string): Promise<OperationRecord> {
  return ownOperation(await readOperation(db, id), personId);
}

/** The operation's record if it is `personId`'s; `not_found` otherwise (`readOperation`'s result). */
export function ownOperation(found: { personId: string; record: OperationRecord } | undefined, personId: string): OperationRecord {
  if (!found || found.personId !== personId) throw orgErrors.notFound('operation');
  return found.record;
}

/**
 * The operation's record with its decision, and whose it is. Once the operation is settled and its decision (if
 * any) resolved, it never changes again (states.ts has no move out of a settled status): `isFinal`.
 */
export async function readOperation(db: Queryable, id: string): Promise<{ personId: string; record: OperationRecord } | undefined> {
  const row = await findOperation(db, id);
  if (!row) return undefined;
  return { personId: row.personId, record: await withDecision(db, row) };
}

/** True for a record that can no longer change (`readOperation`). */
export function isFinal(record: OperationRecord): boolean {
  const decided = record.decision_id === undefined || (record.decision !== undefined && record.decision.status !== 'pending');
  return SETTLED_STATUSES.includes(record.status) && decided;
}

async function withDecision(db: Queryable, row: OperationRow): Promise<OperationRecord> {
  const record = toOperationRecord(row);
  if (!row.decisionId) return record;
  const [decision] = await db
    .select({ status: decisions.status, resolvedBy: decisions.resolvedBy, via: decisions.resolvedVia, note: decisions.note, name: people.name, clientName: oauthClients.name })
    .from(decisions)
    .leftJoin(people, eq(people.id, decisions.resolvedBy))
    .leftJoin(oauthClients, eq(oauthClients.id, decisions.resolvedVia))
    .where(eq(decisions.id, row.decisionId));
  if (!decision) return record;
  return {
    ...record,
    decision: {
      status: decision.status,
      ...(decision.resolvedBy && decision.name !== null ? { resolved_by: toResolvedBy(decision.resolvedBy, decision.name, decision.via, decision.clientName) } : {}),
      ...(decision.note ? { note: decision.note } : {}),
    },
  };
}

/**
 * Waits up to `waitSeconds` for the operation to be answered (settled or paused) and returns it as it then
 * stands (DESIGN 4.3: tools that start work wait at most `wait_seconds`). `runningHere`: the operation's run in
 * this process (`runStartedHere`), waited for before the first read.
 */
export async function awaitOperation(
  ctx: OrgContext,
  id: string,
  personId: string,
  waitSeconds: number,
  runningHere?: Promise<void>,
): Promise<OperationRecord> {
  const deadline = Date.now() + waitSeconds * 1000;
  if (runningHere) {
    // Registered before the run can answer; a run that answers hands over the committed row, unread.
    const next = ctx.watch.next(id, deadline - Date.now(), { from: 'here' });
    const answered = await Promise.race([next.promise, runningHere.then(() => undefined)]);
    next.cancel();
    if (answered?.personId === personId) return answeredRecord(answered);
  }
  return watchUntil(ctx, id, personId, deadline, isAnswered);
}

/**
 * The record of a row a run handed over as it committed it: what `getOperation` would read then. A row that
 * paused has just opened its decision, so that decision is still pending (no read needed to say so).
 */
function answeredRecord(row: OperationRow): OperationRecord {
  const record = toOperationRecord(row);
  return row.status === 'paused' && row.decisionId ? { ...record, decision: { status: 'pending' } } : record;
}

/**
 * Waits up to `ms` for the operation to settle (succeeded, failed or cancelled) and returns it as it then stands;
 * `seen` hears of each status read on the way (MCP `tasks/result` blocks on this, DESIGN 4.9). A caller that goes
 * away aborts `signal`, which ends the wait with the operation as last read.
 */
export function awaitSettled(
  ctx: OrgContext,
  id: string,
  personId: string,
  options: { ms: number; signal?: AbortSignal; seen?: (operation: OperationRecord) => void },
): Promise<OperationRecord> {
  const settled = (status: OperationStatus) => SETTLED_STATUSES.includes(status) || options.signal?.aborted === true;
  return watchUntil(ctx, id, personId, Date.now() + options.ms, settled, options.seen);
}

/** Reads the operation each time the watch wakes (or polls) until `done` says so or the deadline passes. */
async function watchUntil(
  ctx: OrgContext,
  id: string,
  personId: string,
  deadline: number,
  done: (status: OperationStatus) => boolean,
  seen?: (operation: OperationRecord) => void,
): Promise<OperationRecord> {
  for (;;) {
    const next = ctx.watch.next(id, deadline - Date.now());
    const operation = await getOperation(ctx.db, id, personId).catch((error) => {
      next.cancel();
      throw error;
    });
    seen?.(operation);
    if (done(operation.status) || Date.now() >= deadline) {
      next.cancel();
      return operation;
    }
    await next.promise;
  }
}

export function toOperationRecord(row: OperationRow): OperationRecord {
  return {
    operation_id: row.id,
    kind: row.kind,
    status: row.status,
    space_id: row.spaceId,
    agent_id: row.agentId,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
    progress: row.progress,
    ...(row.result === null ? {} : { result: row.result }),
    ...(row.error === null ? {} : { error: row.error }),
    ...(row.decisionId === null ? {} : { decision_id: row.decisionId }),
  };
}

/**
 * The queue handler behind every operation: start it, run its kind's runner, apply the outcome. A runner's
 * thrown error is retried by the queue with backoff; on the last attempt the operation fails instead, so no
 * operation stays running for ever because its runner kept failing.
 */
export function operationJobHandlers(ctx: OrgContext, kinds: readonly RegisteredKind[]): Record<string, JobHandler> {
  const byName = new Map(kinds.map((kind) => [kind.kind, kind]));
  return runOperation.handle(async ({ operation_id: id }, job) => {
    const operation = await startStored(ctx.db, id, job.handedOver?.written);
    // Paused, settled, or moved on by another process: nothing to run.
    if (operation?.status !== 'running') return;
    // The run is part of the trace of the request that started the operation (DESIGN 4.6).
    await withTraceparent(operation.traceparent, () => runOperationNow(ctx, byName, operation, job, job.handedOver?.held));
  });
}

/**
 * Moves a queued operation to running and returns it; any other (a resumed operation is running already) is
 * returned as it stands. Read first — unless `queued`, the row as its start wrote it, was handed over — so that
 * the move is one statement with its activity entry.
 */
async function startStored(db: Queryable, id: string, queued?: OperationRow): Promise<OperationRow | undefined> {
  const stored = queued ?? (await findOperation(db, id));
  if (stored?.status !== 'queued') return stored;
  return moveOperation(db, { held: stored }, 'start').catch(async (error) =>
    isAppError(error) && error.code === 'invalid_state' ? findOperation(db, id) : Promise.reject(error),
  );
}

/** Runs the kind's runner on a running operation and applies its outcome. */
async function runOperationNow(ctx: OrgContext, byName: Map<OperationKind, RegisteredKind>, operation: OperationRow, job: JobInfo, held: unknown): Promise<void> {
  const kind = byName.get(operation.kind);
  let outcome: RunnerOutcome;
  try {
    outcome = kind
      ? await kind.runStored(ctx, operation, held)
      : { status: 'failed', error: failure('internal_error', `no runner for ${operation.kind} operations`) };
  } catch (error) {
    if (!job.lastAttempt) throw error;
    ctx.log.error({ err: error, operation: operation.id }, 'operation failed for good');
    outcome = { status: 'failed', error: isAppError(error) ? { code: error.code, message: error.message } : failure('internal_error') };
  }
  await applyOutcome(ctx, operation, outcome).catch(ignoreLostRace);
}

async function applyOutcome(ctx: OrgContext, operation: OperationRow, outcome: RunnerOutcome): Promise<void> {
  const row = await moveByOutcome(ctx, operation, outcome);
  if (row) ctx.watch.answeredHere(row);
}

async function moveByOutcome(ctx: OrgContext, operation: OperationRow, outcome: RunnerOutcome): Promise<OperationRow | undefined> {
  const { entries } = outcome;
  if (outcome.status === 'running') {
    if (entries) await recordActivity(ctx.db, ...entries);
    return undefined;
  }
  const held = { held: operation, told: entries };
  switch (outcome.status) {
    case 'succeeded':
      return completeOperation(ctx.db, held, outcome.result);
    case 'failed':
      return failOperation(ctx.db, held, outcome.error);
    case 'paused':
      return moveOperation(ctx.db, held, 'pause', { decisionId: outcome.decisionId });
  }
}
