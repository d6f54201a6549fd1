/**
 * Decisions (DESIGN 4.4): a paused action awaiting a person. A decision is bound to the SHA-256 of
 * (capability, canonical input, agent, space), so approving runs exactly that action, once. It is
 * resolved by the agent's responsible person or an owner/admin — in the inbox, or with `resolve_decision`
 * from a client holding `governance:admin` — but never by the client whose action it is. Past the
 * organization's `decision_ttl` it expires and its operation fails `expired`.
 *
 * `pending → approved | denied | expired` is a table; `moveDecision` applies it with one conditional UPDATE,
 * so of several concurrent resolutions exactly one wins and the others get `invalid_state`.
 */
import { createHash } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { canonicalJson } from '../../platform/canonical-json.js';
import type { Queryable } from '../../platform/database.js';
import { jobKind } from '../../platform/jobs.js';
import { toIso } from '../../platform/time.js';
import { currentTraceparent } from '../../platform/trace.js';
import { recordActivity } from '../activity/records.js';
import type { OrgContext } from '../context.js';
import { orgErrors } from '../errors.js';
import type { GateVerdict } from '../gate/index.js';
import { RISKS } from '../gate/index.js';
import { newId } from '../ids.js';
import { failOperation, failure, findOperation, resumeOperation, toOperationRecord } from '../operations/operations.js';
import { aboutOperation, type OperationRow } from '../operations/states.js';
import { createLearnedRule } from '../rules/records.js';
import { decisions, organization } from '../schema.js';
import { decisionsFor, type Resolver } from './records.js';
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
 * and schedules its expiry.
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
      expiresAt: sql`now() + make_interval(secs => ${org?.ttl ?? 604_800})`,
    })
    .onConflictDoNothing({ target: decisions.operationId })
    .returning({ id: decisions.id, expiresAt: decisions.expiresAt });
  if (!created) {
    const [existing] = await db.select({ id: decisions.id }).from(decisions).where(eq(decisions.operationId, paused.operation.id));
    return existing.id;
  }
  await expireDecision.enqueue(db, { decision_id: created.id }, { runAt: toIso(created.expiresAt), key: `decision-expiry:${created.id}` });
  await recordActivity(db, {
    ...aboutOperation(paused.operation),
    kind: 'decision.opened',
    summary: `a person's decision is needed: ${paused.verdict.reasons.join('; ') || 'the gate asked for approval'}`,
    subject: created.id,
    details: { risk: paused.capability.risk, reasons: paused.verdict.reasons, verdict_id: paused.verdict.verdict_id, expires_at: toIso(created.expiresAt) },
  });
  return created.id;
}

export interface Resolution {
  decisionId: string;
  outcome: 'approve' | 'deny';
  note?: string;
  /** Approve and remember: also allow this agent this capability from now on (DESIGN 4.4). */
  remember?: { until?: string; same_input?: boolean };
}

/** Resolves a decision in `db` (a transaction): approving resumes the operation, denying fails it `denied`. */
export async function resolveDecision(db: Queryable, resolution: Resolution, resolver: Resolver) {
  const visible = await decisionsFor(db, resolver, { id: resolution.decisionId });
  const decision = visible[0];
  if (!decision) throw orgErrors.notFound('decision');
  if (resolution.remember && resolution.outcome !== 'approve') throw orgErrors.invalidRequest('remember goes with approve only');
  if (resolution.remember?.until && Date.parse(resolution.remember.until) <= Date.now()) {
    throw orgErrors.invalidRequest('remember.until must be in the future');
  }
  const moved = await moveDecision(db, decision.id, resolution.outcome, {
    resolvedBy: resolver.person.id,
    resolvedVia: resolver.clientId ?? 'inbox',
    note: resolution.note ?? null,
  });
  let operation: OperationRow;
  let learnedRuleId: string | undefined;
  if (resolution.outcome === 'approve') {
    operation = await resumeOperation(db, moved.operationId);
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
  } else {
    const reason = resolution.note ? `a person denied the action: ${resolution.note}` : undefined;
    operation = await failOperation(db, moved.operationId, failure('denied', reason));
  }
  await recordResolution(db, moved, operation, resolver, { note: resolution.note, learnedRuleId, remember: resolution.remember });
  const [record] = await decisionsFor(db, resolver, { id: moved.id });
  return { decision: record, operation: toOperationRecord(operation) };
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
