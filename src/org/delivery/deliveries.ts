/**
 * Delivering work to an agent's webhook (DESIGN 4.5), durably.
 *
 * A delivery is a row (its id is the `webhook-id` of every attempt) and a job. Before each attempt the next
 * one is already queued and committed, due once the attempt's timeout has passed: a process killed
 * mid-attempt leaves that job behind, and whichever process claims it redelivers with the same webhook-id.
 * An attempt that ends resolves the queued one: an answer or a refusal cancels it; a network error, a
 * timeout, an answer over 1 MiB, 408, 429 or 5xx moves it to the backoff time (1 s, 2 s, 4 s, … at most 60 s),
 * or to the time a 429 or 503 names in `Retry-After`. Attempts go on for the retry window (default 10 minutes,
 * counted from the first attempt); then the operation fails `undeliverable`. A redirect and 4xx other than 408
 * and 429 fail it at once (platform/outbound.ts: redirects are never followed).
 *
 * Each attempt carries a fresh callback token (callback-tokens.ts) and a fresh signature timestamp; the
 * agent keeps the first copy it accepted, whose token stays valid.
 */
import { and, eq, sql, type SQL, type WithSubquery } from 'drizzle-orm';
import { queryRows, type Queryable, type Tx } from '../../platform/database.js';
import { fixedStatement } from '../../platform/fixed-statement.js';
import { withTraceparent } from '../../platform/trace.js';
import { recordActivity, type NewActivity } from '../activity/records.js';
import { enqueueJobStatement, jobKind, type JobInfo } from '../../platform/jobs.js';
import { jobs } from '../../platform/schema.js';
import { toIso } from '../../platform/time.js';
import { isAppError } from '../../platform/errors.js';
import { findAgent, webhookTarget, type AgentRow } from '../agents/records.js';
import type { OrgContext } from '../context.js';
import { orgErrors } from '../errors.js';
import { failure, findOperation } from '../operations/operations.js';
import { aboutOperation, SETTLED_STATUSES, type OperationRow } from '../operations/states.js';
import { deliveries } from '../schema.js';
import { CALLBACK_TOKEN_SECONDS, callbackTokenStatement, issueCallbackToken, type CallbackToken } from './callback-tokens.js';
import { deliverSigned, nextAttemptAt, type AttemptOutcome } from './webhook.js';
import { acceptWork, finishWork } from './work.js';
import { ignoreLostRace } from '../../platform/state-table.js';
import { getTaskForAgent } from '../tasks/agent.js';
import { taskAnswerJob } from '../tasks/records.js';

export type DeliveryType = 'message' | 'task' | 'answer';
export type DeliveryRow = typeof deliveries.$inferSelect;

/** What the body carries beside the envelope: `text` for a message, `task` (and `answer`) for a task. */
export type DeliveryContent = Record<string, unknown>;

export const DEFAULT_WINDOW_SECONDS = 600;
export const DEFAULT_TIMEOUT_SECONDS = 10;
const MAX_BACKOFF_SECONDS = 60;

const deliverWork = jobKind<{ delivery_id: string }>('org.delivery');

/** The one pending attempt of a delivery is queued under this key. */
const attemptKey = (deliveryId: string) => `${deliverWork.kind}:${deliveryId}`;

/**
 * DESIGN 4.5: the answer to a task's question goes to the agent as a `type: answer` delivery in the
 * operation it asked from. One delivery per question (its id follows the question's), so the job that
 * queues it may run twice.
 */
export const taskAnswerHandlers = (ctx: OrgContext) =>
  taskAnswerJob.handle(async ({ operation_id, task_id, question_id }) => {
    const operation = await findOperation(ctx.db, operation_id);
    if (!operation?.agentId) return;
    const task = await getTaskForAgent(ctx.db, task_id, operation.agentId);
    const question = task.questions.find((entry) => entry.id === question_id);
    if (!question || question.answer === undefined) return;
    const id = `msg_${question_id.slice(question_id.indexOf('_') + 1)}`;
    await ctx.db.transaction(async (tx) => {
      const content = { task, text: question.answer, answer: { question_id, question: question.text, text: question.answer } };
      const [created] = await tx.insert(deliveries).values({ id, operationId: operation.id, type: 'answer', content }).onConflictDoNothing().returning();
      if (!created) return;
      await deliverWork.enqueue(tx, { delivery_id: id }, { key: attemptKey(id) });
    });
  });

/** A first delivery stored with its first attempt counted, the next one queued and this attempt's token issued. */
interface CountedAttempt {
  counted: DeliveryRow;
  token: CallbackToken;
}

/**
 * What the run of a delivered operation may be handed by its start: `agent`, the operation's agent as the starter
 * read it; `stored`, the first delivery, when the start's statement stored it (`firstDeliveryWrites`).
 */
export interface HeldDelivery {
  agent?: AgentRow;
  stored?: CountedAttempt;
}

/**
 * The first delivery of an operation, made by its runner and attempted at once in this process. It is created
 * with its first attempt, once: a runner that runs again after a crash finds it, and leaves the attempts to
 * its queued job. When the operation's start stored it already (`held.stored`), the attempt is sent at once.
 */
export async function deliverOperation(ctx: OrgContext, operation: OperationRow, type: DeliveryType, content: DeliveryContent, held: HeldDelivery = {}): Promise<void> {
  const draft = held.stored?.counted ?? newDelivery(operation.id, type, content);
  await attempt(ctx, draft, operation, { first: !held.stored, agent: held.agent, stored: held.stored });
}

/**
 * `deliverOperation`'s first writes as writes of the statement that starts the operation (operations.ts
 * `firstWrites`), so the run that follows in this process sends at once: the delivery with its first attempt
 * counted, the next attempt queued and the attempt's token — what `storeFirstAttempt` writes, at the times given
 * here, since the agent is told the token's expiry before the statement's own clock could say it.
 */
export function firstDeliveryWrites(ctx: OrgContext, operationId: string, type: DeliveryType, content: DeliveryContent): { writes: SQL[]; stored: CountedAttempt } {
  const delivery = newDelivery(operationId, type, content);
  const now = Date.now();
  const counted: DeliveryRow = { ...delivery, attempts: 1, firstAttemptAt: new Date(now).toISOString() };
  const expiresAt = new Date(now + CALLBACK_TOKEN_SECONDS * 1000).toISOString();
  const issued = callbackTokenStatement(operationId, { expiresAt });
  const writes = [
    firstDeliveryInsert(delivery, counted.firstAttemptAt),
    enqueueJobStatement(deliverWork.kind, { delivery_id: counted.id }, nextAttemptOf(ctx, counted.id)),
    issued.statement,
  ];
  return { writes, stored: { counted, token: { token: issued.token, expiresAt } } };
}

/** The INSERT of a first delivery, its first attempt counted at `firstAttemptAt` (null: the statement's time). */
function firstDeliveryInsert(delivery: DeliveryRow, firstAttemptAt: string | null): SQL {
  const { id, operationId, type } = delivery;
  return insertFirstDelivery.bind({ id, operationId, type, content: JSON.stringify(delivery.content), firstAttemptAt });
}

const insertFirstDelivery = fixedStatement<{ id: string; operationId: string; type: DeliveryType; content: string; firstAttemptAt: string | null }>(
  (slot) => sql`INSERT INTO ${deliveries} (id, operation_id, type, content, attempts, first_attempt_at)
    VALUES (${slot.id}, ${slot.operationId}, ${slot.type}, ${slot.content}::jsonb, 1, coalesce(${slot.firstAttemptAt}::timestamptz, now()))`,
);

/** An operation's first delivery, not stored yet; its id follows the operation's, so it is stored once. */
function newDelivery(operationId: string, type: DeliveryType, content: DeliveryContent): DeliveryRow {
  const now = new Date().toISOString();
  const id = `msg_${operationId.slice(operationId.indexOf('_') + 1)}`;
  return { id, operationId, type, content, status: 'pending', attempts: 0, firstAttemptAt: null, lastError: null, createdAt: now, updatedAt: now };
}

/** How long one attempt waits for the agent's answer. */
function attemptTimeoutSeconds(ctx: OrgContext): number {
  return ctx.config.delivery?.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
}

/** The attempt queued behind the one about to be sent, due once that one's timeout has passed. */
function nextAttemptOf(ctx: OrgContext, deliveryId: string): { key: string; runAt: Date } {
  return { key: attemptKey(deliveryId), runAt: secondsFromNow(attemptTimeoutSeconds(ctx) + 1) };
}

/** The queue handler of delivery attempts. */
export function deliveryJobHandlers(ctx: OrgContext) {
  return deliverWork.handle(async ({ delivery_id }, job) => attemptDelivery(ctx, delivery_id, job));
}

/** One attempt, and what follows from it. Safe to run twice: a settled delivery or operation is left alone. */
export async function attemptDelivery(ctx: OrgContext, deliveryId: string, job?: JobInfo): Promise<void> {
  const [delivery] = await ctx.db.select().from(deliveries).where(eq(deliveries.id, deliveryId));
  if (!delivery || delivery.status !== 'pending') return;
  const operation = await findOperation(ctx.db, delivery.operationId);
  if (!operation || SETTLED_STATUSES.includes(operation.status)) {
    await settleDelivery(ctx.db, delivery.id, 'failed', 'the operation ended before the agent was reached');
    return;
  }
  // A redelivery is part of the trace of the request that started the operation.
  await withTraceparent(operation.traceparent, () => attempt(ctx, delivery, operation, { job }));
}

/**
 * One attempt. `first`: `delivery` is not stored yet, and is stored with this attempt (nothing is attempted
 * when an earlier run of the runner stored it already). `stored`: the operation's start stored it with its first
 * attempt counted, which is sent at once.
 */
async function attempt(
  ctx: OrgContext,
  delivery: DeliveryRow,
  operation: OperationRow,
  options: { job?: JobInfo; first?: boolean; agent?: AgentRow; stored?: CountedAttempt } = {},
): Promise<void> {
  const windowSeconds = ctx.config.delivery?.windowSeconds ?? DEFAULT_WINDOW_SECONDS;
  if (delivery.firstAttemptAt && Date.parse(toIso(delivery.firstAttemptAt)) + windowSeconds * 1000 <= Date.now()) {
    return giveUp(ctx, delivery, operation, `${delivery.lastError ?? 'the agent could not be reached'}; gave up after ${delivery.attempts} attempts`);
  }

  const agent = options.agent ?? (operation.agentId ? await findAgent(ctx.db, operation.agentId) : undefined);
  let target;
  try {
    if (!agent) throw orgErrors.notFound('agent');
    target = webhookTarget(agent, ctx.config.resolveSecret);
  } catch (error) {
    // Gone, disabled, or its secret unset, since the work was sent.
    if (!isAppError(error)) throw error;
    if (options.first) await ctx.db.insert(deliveries).values(delivery).onConflictDoNothing();
    return giveUp(ctx, delivery, operation, agent ? error.message : 'the agent no longer exists');
  }

  // Before sending: count the attempt, queue the next one behind this attempt's timeout, issue its token.
  const nextAttempt = nextAttemptOf(ctx, delivery.id);
  const counting =
    options.stored ??
    (options.first
      ? await storeFirstAttempt(ctx.db, delivery, nextAttempt)
      : await ctx.db.transaction(async (tx) => {
          const counted = await countAttempt(tx, delivery, options.job);
          if (!counted) return undefined;
          await deliverWork.enqueue(tx, { delivery_id: delivery.id }, nextAttempt);
          return { counted, token: await issueCallbackToken(tx, operation.id) };
        }));
  if (!counting) return;
  const { counted, token } = counting;

  const outcome = await deliverSigned({
    receiver: 'the agent',
    url: target.url,
    secret: target.secret,
    webhookId: delivery.id,
    body: deliveryBody(ctx, delivery, operation, agent, token),
    timeoutMs: attemptTimeoutSeconds(ctx) * 1000,
  });
  await applyAttempt(ctx, counted, operation, outcome, windowSeconds);
}

/**
 * Stores a new delivery with its first attempt counted, the next attempt queued and this attempt's callback
 * token, in one statement (one round trip, all or nothing); undefined when the delivery was stored before (by a
 * run of the runner that a crash interrupted), and then nothing is written.
 */
async function storeFirstAttempt(
  db: Queryable,
  delivery: DeliveryRow,
  nextAttempt: { key: string; runAt: Date },
): Promise<{ counted: DeliveryRow; token: CallbackToken } | undefined> {
  const from = sql`FROM delivery`;
  const issued = callbackTokenStatement(delivery.operationId, { from });
  const [row] = await queryRows<{ first_attempt_at: string; expires_at: string }>(
    db,
    sql`WITH delivery AS (${firstDeliveryInsert(delivery, null)} ON CONFLICT DO NOTHING RETURNING first_attempt_at),
      next_attempt AS (${enqueueJobStatement(deliverWork.kind, { delivery_id: delivery.id }, nextAttempt, from)}),
      token AS (${issued.statement} RETURNING expires_at)
      SELECT delivery.first_attempt_at::text, token.expires_at::text FROM delivery, token`,
  );
  if (!row) return undefined;
  return {
    counted: { ...delivery, attempts: 1, firstAttemptAt: row.first_attempt_at },
    token: { token: issued.token, expiresAt: toIso(row.expires_at) },
  };
}

/**
 * Counts the attempt, compare-and-set on the count this run read: a second claim of the same attempt (another
 * process holding a stale job) counts nothing and sends nothing.
 */
async function countAttempt(tx: Tx, delivery: DeliveryRow, job: JobInfo | undefined): Promise<DeliveryRow | undefined> {
  const [row] = await tx
    .update(deliveries)
    .set({ attempts: sql`${deliveries.attempts} + 1`, firstAttemptAt: sql`coalesce(${deliveries.firstAttemptAt}, now())`, updatedAt: sql`now()` })
    .where(and(eq(deliveries.id, delivery.id), eq(deliveries.attempts, delivery.attempts), eq(deliveries.status, 'pending')))
    .returning();
  // The running job may hold the key; the next attempt takes it over (see platform/jobs.ts periodicJob).
  if (row && job) await tx.update(jobs).set({ key: null }).where(eq(jobs.id, job.id));
  return row;
}

/** DESIGN 4.5's body. */
function deliveryBody(
  ctx: OrgContext,
  delivery: DeliveryRow,
  operation: OperationRow,
  agent: AgentRow,
  token: { token: string; expiresAt: string },
): Record<string, unknown> {
  return {
    type: delivery.type,
    operation_id: operation.id,
    agent: { id: agent.id, key: agent.key },
    space_id: operation.spaceId,
    ...delivery.content,
    from: { person_id: operation.personId, client_id: operation.clientId },
    callback: { url: callbackUrl(ctx, operation.id), token: token.token, expires_at: token.expiresAt },
  };
}

/** Where the agent reports on an operation (agent-api/routes.ts). */
export function callbackUrl(ctx: OrgContext, operationId: string): string {
  return `${ctx.config.publicUrl}/agent-api/operations/${operationId}`;
}

/** Applies what the attempt came to, recording the attempt in the activity log in the same transaction. */
async function applyAttempt(ctx: OrgContext, delivery: DeliveryRow, operation: OperationRow, outcome: AttemptOutcome, windowSeconds: number): Promise<void> {
  switch (outcome.kind) {
    case 'answered': {
      // The attempt's entry, the settlement and the operation's end: one statement.
      const finished = await finishWork(ctx.db, operation, { status: 'succeeded', result: outcome.result }, {
        alongside: settlement(ctx.db, delivery.id, 'delivered'),
        told: [attemptActivity(delivery, operation, outcome, { outcome: 'delivered' })],
      }).catch(ignoreLostRace);
      if (finished) ctx.watch.answeredHere(finished);
      return;
    }
    case 'accepted':
      return ctx.db.transaction(async (tx) => {
        await settleDelivery(tx, delivery.id, 'delivered');
        // The agent took up the task it was sent; an answer's acceptance changes nothing.
        if (delivery.type === 'task') await acceptWork(tx, operation);
        await recordActivity(tx, attemptActivity(delivery, operation, outcome, { outcome: 'delivered' }));
      });
    case 'refused':
      return giveUp(ctx, delivery, operation, outcome.reason, attemptActivity(delivery, operation, outcome, { outcome: 'failed' }));
    case 'retry': {
      const deadline = Date.parse(toIso(delivery.firstAttemptAt!)) + windowSeconds * 1000;
      // Retry-After (429, 503) is honoured within the delivery window; otherwise the backoff decides.
      const next = nextAttemptAt(outcome, delivery.attempts, { deadline, maxBackoffSeconds: MAX_BACKOFF_SECONDS });
      ctx.log.info({ delivery: delivery.id, operation: operation.id, attempts: delivery.attempts, reason: outcome.reason }, 'delivery attempt failed; retrying');
      await ctx.db.transaction(async (tx) => {
        await tx.update(deliveries).set({ lastError: outcome.reason, updatedAt: sql`now()` }).where(eq(deliveries.id, delivery.id));
        await deliverWork.enqueue(tx, { delivery_id: delivery.id }, { key: attemptKey(delivery.id), runAt: next });
        await recordActivity(tx, attemptActivity(delivery, operation, outcome, { outcome: 'will_retry', retryAt: next.toISOString() }));
      });
      return;
    }
  }
}

/**
 * The `delivery.attempted` entry (the operation page lists these): the attempt's number, the agent's HTTP status
 * when it answered, the error, and whether it was delivered, will be retried or failed for good.
 */
function attemptActivity(
  delivery: DeliveryRow,
  operation: OperationRow,
  outcome: AttemptOutcome,
  next: { outcome: 'delivered' | 'will_retry' | 'failed'; retryAt?: string },
): NewActivity {
  const error = 'reason' in outcome ? outcome.reason : null;
  const said = next.outcome === 'delivered' ? 'delivered' : next.outcome === 'will_retry' ? 'failed; will retry' : 'failed for good';
  return {
    ...aboutOperation(operation),
    kind: 'delivery.attempted',
    summary: `${delivery.type} delivery attempt ${delivery.attempts} ${said}${error ? `: ${error}` : ''}`,
    subject: delivery.id,
    details: {
      delivery_id: delivery.id,
      type: delivery.type,
      attempt: delivery.attempts,
      outcome: next.outcome,
      http_status: outcome.status ?? null,
      error,
      ...(next.retryAt ? { retry_at: next.retryAt } : {}),
    },
  };
}

/**
 * The delivery failed for good: so does its operation, with `undeliverable` (DESIGN 4.5). `attempted`: the entry of
 * the attempt that ended it, when one did.
 */
async function giveUp(ctx: OrgContext, delivery: DeliveryRow, operation: OperationRow, reason: string, attempted?: NewActivity): Promise<void> {
  ctx.log.warn({ delivery: delivery.id, operation: operation.id, reason }, 'delivery failed; the operation is undeliverable');
  const error = failure('undeliverable', `the agent could not be reached: ${reason}`);
  const told = attempted ? [attempted] : [];
  await finishWork(ctx.db, operation, { status: 'failed', error }, { alongside: settlement(ctx.db, delivery.id, 'failed', reason), told }).catch(ignoreLostRace);
}

/** Settles a pending delivery and drops its queued attempt, in one statement. */
async function settleDelivery(db: Queryable, id: string, status: 'delivered' | 'failed', reason?: string): Promise<void> {
  await db.execute(sql`WITH settled AS (${settleSql(id, status, reason)}) ${dropAttemptSql(id)}`);
}

/** `settleDelivery`'s writes, to go with the operation's move in its statement (work.ts finishWork). */
function settlement(db: Queryable, id: string, status: 'delivered' | 'failed', reason?: string): WithSubquery[] {
  return [db.$with('settled_delivery', {}).as(settleSql(id, status, reason)), db.$with('dropped_attempt', {}).as(dropAttemptSql(id))];
}

function settleSql(id: string, status: 'delivered' | 'failed', reason: string | undefined): SQL {
  return sql`UPDATE ${deliveries} SET status = ${status}, last_error = coalesce(${reason ?? null}, last_error), updated_at = now()
    WHERE id = ${id} AND status = 'pending'`;
}

function dropAttemptSql(id: string): SQL {
  return sql`DELETE FROM ${jobs} WHERE key = ${attemptKey(id)}`;
}

function secondsFromNow(seconds: number): Date {
  return new Date(Date.now() + seconds * 1000);
}
