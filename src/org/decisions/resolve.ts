/**
 * Decisions (DESIGN 4.4): a paused action awaiting a person. A decision is bound to the SHA-256 of
 * (capability, canonical input, agent, space), so approving runs exactly that action, once. It is
 * resolved by the agent's responsible person or an owner/admin — in the inbox, or with `resolve_decision`
 * from a client holding `governance:admin` — but never by the client whose action it is. Past the
 * organization's `decision_ttl` it expires and its operation fails `expired`.
 *
 * `pending → approved | denied | expired` is a table; `moveDecision` applies it with one conditional UPDATE,
 * so of several concurrent resolutions exactly one wins and the others get `invalid_state`.
 *
 * The two-person rule (DESIGN 4.8): the gate's verdict says how many different people must approve, stored on the
 * decision when it opens. Each approval is a `decision_approvals` row with its person and channel; the last one
 * needed approves the decision and the action runs once; any deny ends it; with more than one needed, the person
 * the action was asked for never counts.
 */
import { createHash } from 'node:crypto';
import { count, eq, sql } from 'drizzle-orm';
import { canonicalJson } from '../../platform/canonical-json.js';
import type { Queryable } from '../../platform/database.js';
import { jobKind } from '../../platform/jobs.js';
import { toIso } from '../../platform/time.js';
import { currentTraceparent } from '../../platform/trace.js';
import { recordActivity } from '../activity/records.js';
import { announce } from '../events/announce.js';
import type { OrgContext } from '../context.js';
import { orgErrors } from '../errors.js';
import type { GateVerdict } from '../gate/index.js';
import { RISKS } from '../gate/index.js';
import { newId } from '../ids.js';
import { failOperation, failure, findOperation, resumeOperation, toOperationRecord } from '../operations/operations.js';
import { aboutOperation, type OperationRow } from '../operations/states.js';
import { createLearnedRule } from '../rules/records.js';
import { decisionApprovals, decisions, organization } from '../schema.js';
import { decisionsFor, type Resolver } from './records.js';
import { scheduleReminder } from './reminders.js';
import { moveDecision, type DecisionRow } from './states.js';

/** DESIGN 4.4: the action a decision is bound to. */
export function actionHash(action: { capabilityId: string; input: unknown; agentId: string; spaceId: string | null }): string {
  return createHash('sha256')
    .update(canonicalJson({ capability: action.capabilityId, input: action.input, agent: action.agentId, space: action.spaceId }))
    .digest('hex');
}

const expireDecision = jobKind<{ decision_id: string }>('org.decision-expiry');

/**
 * Opens the decision an operation pauses on (once per operation: a repeated run finds the one it opened)
 * and schedules its reminder and its expiry.
 */
export async function openDecision(
  db: Queryable,
  paused: {
    operation: OperationRow;
    capability: { id: string; risk: (typeof RISKS)[number] };
    agent: { id: string };
    input: unknown;
    verdict: GateVerdict & { verdict_id: string };
  },
): Promise<string> {
  const [org] = await db.select({ ttl: organization.decisionTtlSeconds }).from(organization).limit(1);
  const [created] = await db
    .insert(decisions)
    .values({
      id: newId('dec'),
      status: 'pending',
      operationId: paused.operation.id,
      capabilityId: paused.capability.id,
      agentId: paused.agent.id,
      spaceId: paused.operation.spaceId,
      input: paused.input,
      actionHash: actionHash({ capabilityId: paused.capability.id, input: paused.input, agentId: paused.agent.id, spaceId: paused.operation.spaceId }),
      risk: paused.capability.risk,
      reasons: paused.verdict.reasons,
      verdictId: paused.verdict.verdict_id,
      approvalsRequired: paused.verdict.approvals ?? 1,
      expiresAt: sql`now() + make_interval(secs => ${org?.ttl ?? 604_800})`,
    })
    .onConflictDoNothing({ target: decisions.operationId })
    .returning({ id: decisions.id, requestedAt: decisions.requestedAt, expiresAt: decisions.expiresAt });
  if (!created) {
    const [existing] = await db.select({ id: decisions.id }).from(decisions).where(eq(decisions.operationId, paused.operation.id));
    return existing.id;
  }
  await expireDecision.enqueue(db, { decision_id: created.id }, { runAt: toIso(created.expiresAt), key: `decision-expiry:${created.id}` });
  await scheduleReminder(db, created);
  await recordActivity(db, {
    ...aboutOperation(paused.operation),
    kind: 'decision.opened',
    summary: `a person's decision is needed: ${paused.verdict.reasons.join('; ') || 'the gate asked for approval'}`,
    subject: created.id,
    details: {
      risk: paused.capability.risk,
      reasons: paused.verdict.reasons,
      verdict_id: paused.verdict.verdict_id,
      expires_at: toIso(created.expiresAt),
      ...(paused.verdict.approvals ? { approvals_required: paused.verdict.approvals } : {}),
    },
  });
  await announce(db, 'decision.pending', { decision_id: created.id });
  return created.id;
}

export interface Resolution {
  decisionId: string;
  outcome: 'approve' | 'deny';
  note?: string;
  /** Approve and remember: also allow this agent this capability from now on (DESIGN 4.4). */
  remember?: { until?: string; same_input?: boolean };
}

/**
 * Resolves a decision in `db` (a transaction). A deny ends it at once and fails its operation `denied`. An approve is
 * one person's approval (DESIGN 4.8): the decision is approved, and its operation resumes, at the last approval it
 * needs; short of that it stays pending and its operation paused.
 */
export async function resolveDecision(db: Queryable, resolution: Resolution, resolver: Resolver) {
  const visible = await decisionsFor(db, resolver, { id: resolution.decisionId });
  const decision = visible[0];
  if (!decision) throw orgErrors.notFound('decision');
  checkRemember(resolution, decision.approvals_required);
  const resolved = { resolvedBy: resolver.person.id, resolvedVia: resolver.clientId ?? 'inbox', note: resolution.note ?? null };
  if (resolution.outcome === 'deny') {
    const moved = await moveDecision(db, decision.id, 'deny', resolved);
    const reason = resolution.note ? `a person denied the action: ${resolution.note}` : undefined;
    const operation = await failOperation(db, moved.operationId, failure('denied', reason));
    await recordResolution(db, moved, operation, resolver, { note: resolution.note });
    return answerOf(db, resolver, decision.id, operation);
  }
  const approval = await recordApproval(db, decision.id, resolution, resolver);
  if (approval.given < approval.decision.approvalsRequired) return answerOf(db, resolver, decision.id, approval.operation);
  const moved = await moveDecision(db, decision.id, 'approve', resolved);
  const operation = await resumeOperation(db, moved.operationId);
  let learnedRuleId: string | undefined;
  if (resolution.remember) {
    learnedRuleId = await createLearnedRule(db, {
      agentId: moved.agentId,
      capabilityId: moved.capabilityId,
      sameInput: resolution.remember.same_input ? moved.input : undefined,
      until: resolution.remember.until ?? null,
      createdBy: resolver.person.id,
      decisionId: moved.id,
    });
  }
  await recordResolution(db, moved, operation, resolver, { note: resolution.note, learnedRuleId, remember: resolution.remember });
  return answerOf(db, resolver, decision.id, operation);
}

function checkRemember(resolution: Resolution, approvalsRequired: number): void {
  if (!resolution.remember) return;
  if (resolution.outcome !== 'approve') throw orgErrors.invalidRequest('remember goes with approve only');
  // A learned rule would let the next such action run unasked: one person would waive the two-person rule.
  if (approvalsRequired > 1) {
    throw orgErrors.invalidRequest(`remember is not offered on a decision that needs ${approvalsRequired} people's approval: it would let one person waive that rule for later actions`);
  }
  if (resolution.remember.until && Date.parse(resolution.remember.until) <= Date.now()) {
    throw orgErrors.invalidRequest('remember.until must be in the future');
  }
}

async function answerOf(db: Queryable, resolver: Resolver, decisionId: string, operation: OperationRow) {
  const [record] = await decisionsFor(db, resolver, { id: decisionId });
  return { decision: record, operation: toOperationRecord(operation) };
}

/**
 * Records the resolver's approval and answers how many different people have approved so far (DESIGN 4.8).
 * `count_approval` locks the decision's row first and refuses one no longer pending, so approvals of one decision
 * are counted one at a time: each count sees every approval committed before it, and of concurrent approvals
 * exactly one finds the number reached. With more than one approval needed, the person the action was asked for
 * never counts (they may still deny), and nobody counts twice.
 */
async function recordApproval(db: Queryable, decisionId: string, resolution: Resolution, resolver: Resolver) {
  const decision = await moveDecision(db, decisionId, 'count_approval');
  const operation = await findOperation(db, decision.operationId);
  if (!operation) throw orgErrors.notFound('operation');
  if (decision.approvalsRequired > 1 && operation.personId === resolver.person.id) {
    throw orgErrors.forbidden(
      `this action was asked for on your behalf and needs ${decision.approvalsRequired} other people's approval (the two-person rule): you may deny it, not approve it`,
    );
  }
  const inserted = await db
    .insert(decisionApprovals)
    .values({ decisionId, personId: resolver.person.id, via: resolver.clientId ?? 'inbox', note: resolution.note ?? null })
    .onConflictDoNothing()
    .returning({ personId: decisionApprovals.personId });
  if (!inserted.length) {
    throw orgErrors.invalidState('you already approved this decision: it waits for another person\'s approval', { status: 'pending' });
  }
  const [{ given }] = await db.select({ given: count() }).from(decisionApprovals).where(eq(decisionApprovals.decisionId, decisionId));
  if (decision.approvalsRequired > 1) {
    const via = resolver.clientId ? 'through a client' : 'in the inbox';
    await recordActivity(db, {
      ...aboutOperation(operation),
      personId: resolver.person.id,
      clientId: resolver.clientId,
      kind: 'decision.approved_once',
      summary: `approval ${given} of ${decision.approvalsRequired} ${via}${resolution.note ? `: ${resolution.note}` : ''}`,
      subject: decisionId,
      details: { given, required: decision.approvalsRequired, via: resolver.clientId ?? 'inbox', ...(resolution.note ? { note: resolution.note } : {}) },
    });
  }
  return { decision, operation, given };
}

/**
 * The resolution's entries: who resolved it and where (a client, or the inbox), and the rule it taught. They carry
 * the trace of the operation the decision paused, which joins them to the call that asked; a resolving request
 * with a trace of its own is named in the details.
 */
async function recordResolution(
  db: Queryable,
  decision: DecisionRow,
  operation: OperationRow,
  resolver: Resolver,
  extra: { note?: string; learnedRuleId?: string; remember?: Resolution['remember'] },
): Promise<void> {
  await announce(db, 'decision.resolved', { decision_id: decision.id });
  const via = resolver.clientId ? 'client' : 'inbox';
  const own = currentTraceparent();
  const common = { ...aboutOperation(operation), personId: resolver.person.id, clientId: resolver.clientId };
  await recordActivity(
    db,
    {
      ...common,
      kind: 'decision.resolved',
      summary: `decision ${decision.status} ${via === 'inbox' ? 'in the inbox' : 'through a client'}${extra.note ? `: ${extra.note}` : ''}`,
      subject: decision.id,
      details: {
        outcome: decision.status,
        via,
        requested_for: operation.personId,
        ...(extra.note ? { note: extra.note } : {}),
        ...(own && own !== operation.traceparent ? { request_traceparent: own } : {}),
      },
    },
    ...(extra.learnedRuleId
      ? [
          {
            ...common,
            kind: 'rule.learned' as const,
            summary: `learned to allow this agent this capability${extra.remember?.until ? ` until ${extra.remember.until}` : ''}${extra.remember?.same_input ? ' with this same input' : ''}`,
            subject: extra.learnedRuleId,
            details: { decision_id: decision.id, until: extra.remember?.until ?? null, same_input: extra.remember?.same_input ?? false },
          },
        ]
      : []),
  );
}

/** The due job of each decision: at its expiry, a still pending decision expires and its operation fails `expired`. */
export function decisionJobHandlers(ctx: OrgContext) {
  return expireDecision.handle(async ({ decision_id: id }) => {
    await ctx.db.transaction(async (tx) => {
      let decision: DecisionRow;
      try {
        decision = await moveDecision(tx, id, 'expire');
      } catch (error) {
        // Resolved in time, or gone: nothing to expire.
        if ((error as { code?: string }).code === 'invalid_state' || (error as { code?: string }).code === 'not_found') return;
        throw error;
      }
      const operation = await findOperation(tx, decision.operationId);
      if (operation) {
        await recordActivity(tx, {
          ...aboutOperation(operation),
          kind: 'decision.expired',
          summary: 'the decision expired before anyone resolved it',
          subject: decision.id,
          details: { expires_at: toIso(decision.expiresAt) },
        });
      }
      if (operation?.status === 'paused') await failOperation(tx, decision.operationId, failure('expired'));
    });
  });
}
