/**
 * Capabilities (spec 3.4, 5.1; DESIGN 4.1, 4.2, 4.4): what the organization can do in the world, each
 * with a risk tier, a cost and a connector. Every execution — asked by a connected client over MCP or by
 * an agent through the agent API — goes through the runtime gate as the acting agent:
 *
 * 1. the input is checked against the capability's JSON Schema (an error, not a verdict: input-schema.ts);
 * 2. the operation's runner loads the gate's inputs, asks `decide()` and stores the verdict with them;
 * 3. `allow` charges the agent's budget and runs the connector; `require_approval` opens a decision and
 *    pauses the operation (decisions/resolve.ts); `deny` fails it with `denied_by_rule`;
 * 4. once a person approves, the runner runs again: it checks the hard denies once more and runs exactly
 *    the action the decision was bound to.
 */
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { queryRows, type Queryable } from '../../platform/database.js';
import type { OrgContext } from '../context.js';
import { connectorProblem, runConnector } from './connectors/index.js';
import { failure, type RunnerOutcome } from '../operations/operations.js';
import { aboutOperation, type OperationRow } from '../operations/states.js';
import type { NewActivity } from '../activity/records.js';
import { actionHash, openDecision } from '../decisions/resolve.js';
import { recheckHardDenies, type GateVerdict } from '../gate/index.js';
import { operations } from '../schema.js';
import { checkCapabilityInput } from './input-schema.js';
import { announceBudgetCrossing, budgetSql, chargeAgentStatement, usageMonth } from '../agents/usage.js';
import { type OperationOf, defineOperationKind } from '../operations/kinds.js';
import { inputSchemaOf, type AgentRow, type CapabilityRow } from './catalogue.js';
import { gateSubjects, decideAndCharge, evaluateGate, loadGateSubject } from './gate-inputs.js';
import { findDecision } from '../decisions/states.js';

export interface ExecuteRequest {
  capability: CapabilityRow;
  input: Record<string, unknown>;
  spaceId: string;
  dryRun: boolean;
  agentId: string;
  personId: string;
  clientId: string | null;
}

/**
 * Checks the input, then either returns the gate's verdict (a dry run: nothing happens) or starts the
 * capability operation in `db` (the caller's transaction) and returns its id.
 */
export async function executeCapability(
  ctx: OrgContext,
  db: Queryable,
  request: ExecuteRequest,
): Promise<{ dryRun: GateVerdict } | { operationId: string }> {
  const { capability } = request;
  checkCapabilityInput(inputSchemaOf(capability), request.input);
  if (request.dryRun) {
    const subject = await loadGateSubject(db, capability.id, request.agentId);
    const { verdict_id: _id, ...verdict } = await evaluateGate(db, {
      ...subject,
      input: request.input,
      spaceId: request.spaceId,
      asker: { personId: request.personId, clientId: request.clientId },
    });
    return { dryRun: verdict };
  }
  const operationId = await capabilityKind.start(ctx, db, {
    personId: request.personId,
    clientId: request.clientId,
    agentId: request.agentId,
    spaceId: request.spaceId,
    input: { capability_id: capability.id, input: request.input },
  });
  return { operationId };
}

/** `capability` operations: the gate decides, then the connector runs. Safe to repeat: a decision is opened once per operation. */
export const capabilityKind = defineOperationKind({
  kind: 'capability',
  input: z.object({ capability_id: z.string(), input: z.record(z.string(), z.unknown()) }),
  run: runCapability,
});

async function runCapability(ctx: OrgContext, operation: OperationOf<{ capability_id: string; input: Record<string, unknown> }>): Promise<RunnerOutcome> {
  const { capability_id: capabilityId, input } = operation.input;
  const subject = await loadGateSubject(ctx.db, capabilityId, operation.agentId!);
  const { capability, agent } = subject;

  // Charged means the gate (or a person) already let this action run and a crash interrupted it: run it again
  // without deciding anew (the connector's stable webhook-id lets the receiver drop a repeat).
  if (operation.chargedAt) return runApproved(ctx, capability, agent, operation, input);

  if (operation.decisionId) {
    const decision = await findDecision(ctx.db, operation.decisionId);
    if (decision?.status === 'approved') {
      const bound = actionHash({ capabilityId, input, agentId: agent.id, spaceId: operation.spaceId });
      if (bound !== decision.actionHash) return { status: 'failed', error: failure('denied_by_rule', 'the action differs from the one approved') };
      // DESIGN 4.4: approving runs exactly that action, after checking the hard denies again.
      const { capability: gateCapability, agentBase } = gateSubjects(capability, agent);
      const denied = recheckHardDenies({ capability: gateCapability, agent: { ...agentBase, spent: 0 } });
      if (denied) return { status: 'failed', error: failure('denied_by_rule', denied.reasons.join('; ')) };
      return runApproved(ctx, capability, agent, operation, input);
    }
    if (decision?.status === 'pending') return { status: 'paused', decisionId: decision.id };
  }

  const problem = await connectorProblem(ctx, capability.connector);
  if (problem) return { status: 'failed', error: failure('connector_failed', problem) };
  const { charged, ...verdict } = await decideAndCharge(ctx.db, {
    ...subject,
    input,
    spaceId: operation.spaceId,
    operationId: operation.id,
    asker: { personId: operation.personId, clientId: operation.clientId },
  });
  if (verdict.verdict === 'deny') return { status: 'failed', error: failure('denied_by_rule', verdict.reasons.join('; ')) };
  if (verdict.verdict === 'require_approval') {
    // The decision and its expiry job together, or neither.
    const decisionId = await ctx.db.transaction((tx) => openDecision(tx, { operation, capability, agent, input, verdict }));
    return { status: 'paused', decisionId };
  }
  return runApproved(ctx, capability, agent, operation, input, { charged });
}

/**
 * A runner runs again after a crash (operations/operations.ts), so the cost is charged with a mark on the operation, in
 * one statement (the mark and the charge happen together or not at all): the agent pays for an operation once.
 * A person's approval overrides the budget, so this charge has no limit.
 */
async function chargeOnce(ctx: OrgContext, operationId: string, agentId: string, cost: number): Promise<void> {
  const mark = sql`UPDATE ${operations} SET charged_at = now() WHERE id = ${operationId} AND charged_at IS NULL RETURNING id`;
  const at = new Date();
  // A transaction, so that `budget.threshold` is announced with the charge that crossed the line, or not at all.
  await ctx.db.transaction(async (tx) => {
    const [charged] = await queryRows<{ used: number; budget: number | null }>(
      tx,
      sql`WITH first AS (${mark}) ${chargeAgentStatement(agentId, cost, { from: sql`FROM first`, at })} RETURNING used, ${budgetSql(agentId)} AS budget`,
    );
    if (!charged) return;
    await announceBudgetCrossing(tx, { agentId, month: usageMonth(at), cost, used: Number(charged.used), budget: charged.budget === null ? null : Number(charged.budget) });
  });
}

async function runApproved(
  ctx: OrgContext,
  capability: CapabilityRow,
  agent: AgentRow,
  operation: OperationRow,
  input: Record<string, unknown>,
  { charged = false } = {},
): Promise<RunnerOutcome> {
  if (!charged) await chargeOnce(ctx, operation.id, agent.id, capability.cost);
  const outcome = await runConnector(ctx, capability, {
    operationId: operation.id,
    decisionId: operation.decisionId,
    capability: { id: capability.id, key: capability.key },
    agent: { id: agent.id, key: agent.key, name: agent.name },
    spaceId: operation.spaceId,
    input,
  });
  // The call changed the world, not the database: its entry goes with the outcome, whatever becomes of it.
  return { ...outcome, entries: [connectorActivity(capability, operation, outcome)] };
}

/** The `connector.called` entry: which connector and host, and what came of the call. */
function connectorActivity(capability: CapabilityRow, operation: OperationRow, outcome: RunnerOutcome): NewActivity {
  const { connector } = capability;
  const target = connector.kind === 'webhook' ? hostOf(connector.url) : `content ${connector.action}`;
  // The webhook connector's result is `{status, body}`; the content connector's is the content's own answer.
  const answer = outcome.status === 'succeeded' && connector.kind === 'webhook' ? (outcome.result as { status?: unknown } | null) : null;
  return {
    ...aboutOperation(operation),
    kind: 'connector.called',
    summary: `${capability.key} called its ${connector.kind} connector (${target}): ${outcome.status === 'failed' ? `failed — ${outcome.error.message}` : outcome.status}`,
    subject: capability.id,
    details: {
      connector: connector.kind,
      target,
      outcome: outcome.status,
      ...(typeof answer?.status === 'number' ? { http_status: answer.status } : {}),
      ...(outcome.status === 'failed' ? { error: outcome.error } : {}),
    },
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url.slice(0, 200);
  }
}
