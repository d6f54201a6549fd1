/**
 * Capabilities (spec 3.4, 5.1; DESIGN 4.1, 4.2, 4.4): what the organization can do in the world, each
 * with a risk tier, a cost and a connector. Every execution — asked by a connected client over MCP or by
 * an agent through the agent API — goes through the runtime gate as the acting agent:
 *
 * 1. the input is checked against the capability's JSON Schema (an error, not a verdict: input-schema.ts);
 * 2. the operation's runner loads the gate's inputs, asks `decide()` and stores the verdict with them;
 * 3. `allow` charges the agent's budget and runs the connector; `require_approval` opens a decision and
 *    pauses the operation (decisions.ts); `deny` fails it with `denied_by_rule`;
 * 4. once a person approves, the runner runs again: it checks the hard denies once more and runs exactly
 *    the action the decision was bound to.
 */
import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { queryRows, type Queryable } from '../../platform/database.js';
import type { OrgContext } from '../context.js';
import { contentActionSchema } from './connectors/content-actions.js';
import { connectorProblem, runConnector, type Connector } from './connectors/index.js';
import { failure, startOperation, type RunnerOutcome } from '../operations/operations.js';
import type { OperationRow } from '../operations/states.js';
import { actionHash, findDecision, openDecision } from '../decisions/resolve.js';
import { orgErrors } from '../errors.js';
import { decide, recheckHardDenies, RISKS, VERDICTS, type GateInputs, type GateRule, type GateVerdict } from '../gate/index.js';
import { newId } from '../ids.js';
import { differsFromExcluded, upsertOutcome, type UpsertOutcome } from '../../platform/upsert.js';
import { agentMonthlyUsage, agents, capabilities, gateVerdicts, operations } from '../schema.js';
import { checkCapabilityInput } from './input-schema.js';
import { gateRulesSql, toGateRules } from '../rules/records.js';
import { chargeAgentStatement, spentThisMonthSql, usageMonth } from '../agents/usage.js';

export interface CapabilityInput {
  key: string;
  name: string;
  description: string;
  risk: 'low' | 'medium' | 'high' | 'critical';
  cost: number;
  connector: Record<string, unknown>;
  inputSchema: Record<string, unknown> | null;
  enabled: boolean;
}

export async function upsertCapability(db: Queryable, input: CapabilityInput): Promise<{ outcome: UpsertOutcome }> {
  const compared = (Object.keys(input) as Array<keyof CapabilityInput>).map((key) => capabilities[key]);
  const [row] = await db
    .insert(capabilities)
    .values({ id: newId('cap'), ...input })
    .onConflictDoUpdate({ target: capabilities.key, set: { ...input, updatedAt: sql`now()` }, setWhere: differsFromExcluded(capabilities, compared) })
    .returning({ created: sql<boolean>`(xmax = 0)` });
  return { outcome: upsertOutcome(row) };
}

/** DESIGN 4.2: with no file, the first start wires publish_blog_post (risk high) to the content service beside it. */
export async function ensureDefaultPublishCapability(db: Queryable): Promise<void> {
  await db
    .insert(capabilities)
    .values({
      id: newId('cap'),
      key: 'publish_blog_post',
      name: 'Publish a blog post on the website',
      description: 'Publishes a blog post of the content service beside this organization, by its slug.',
      risk: 'high',
      cost: 1,
      connector: { kind: 'content', action: 'publish_blog_post' },
      inputSchema: null,
      enabled: true,
    })
    .onConflictDoNothing({ target: capabilities.key });
}

type CapabilityRow = typeof capabilities.$inferSelect;
type AgentRow = typeof agents.$inferSelect;

export const capabilityRecord = z.object({
  id: z.string(),
  key: z.string(),
  name: z.string(),
  description: z.string(),
  risk: z.enum(RISKS),
  cost: z.number().int(),
  /** The JSON Schema `input` must match; null when the capability takes any input object. */
  input_schema: z.record(z.string(), z.unknown()).nullable(),
  enabled: z.boolean(),
  connector: z.object({ kind: z.enum(['webhook', 'content']) }),
});
export type CapabilityRecord = z.infer<typeof capabilityRecord>;

export const gateVerdictRecord = z.object({
  verdict: z.enum(VERDICTS),
  reasons: z.array(z.string()),
  rule_ids: z.array(z.string()),
  shadow: z.array(z.object({ rule_id: z.string(), name: z.string(), would: z.enum(VERDICTS) })),
});

/** The input schema in force: the file's, else (content connector) the content tool's own arguments. */
export function inputSchemaOf(row: CapabilityRow): Record<string, unknown> | null {
  if (row.inputSchema) return row.inputSchema as Record<string, unknown>;
  const connector = row.connector as Connector;
  return connector.kind === 'content' ? contentActionSchema(connector.action) : null;
}

export function toCapabilityRecord(row: CapabilityRow): CapabilityRecord {
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    description: row.description,
    risk: row.risk,
    cost: row.cost,
    input_schema: inputSchemaOf(row),
    enabled: row.enabled,
    connector: { kind: (row.connector as Connector).kind },
  };
}

export async function listCapabilities(db: Queryable, query?: string): Promise<CapabilityRecord[]> {
  const rows = await db.select().from(capabilities).orderBy(capabilities.key);
  const words = (query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  return rows
    .filter((row) => words.every((word) => `${row.key} ${row.name} ${row.description}`.toLowerCase().includes(word)))
    .map(toCapabilityRecord);
}

export async function findCapability(db: Queryable, id: string): Promise<CapabilityRow> {
  const [row] = await db.select().from(capabilities).where(eq(capabilities.id, id));
  if (!row) throw orgErrors.notFound('capability');
  return row;
}

/** DESIGN 4.1: the acting agent of a client's call is the client's own agent (one per client and person). */
export async function clientAgent(db: Queryable, personId: string, clientId: string): Promise<AgentRow> {
  const [row] = await db
    .select()
    .from(agents)
    .where(and(eq(agents.kind, 'client'), eq(agents.clientId, clientId), eq(agents.responsiblePersonId, personId)));
  if (!row) throw orgErrors.forbidden('this client is not connected as an agent of the organization: connect it again through consent');
  return row;
}

function gateSubjects(capability: CapabilityRow, agent: AgentRow) {
  return {
    capability: { id: capability.id, key: capability.key, risk: capability.risk, cost: capability.cost, enabled: capability.enabled },
    agentBase: { id: agent.id, key: agent.key, status: agent.status, autonomy: agent.autonomy, budget: agent.budget },
  };
}

/** What the gate weighs besides the input (DESIGN 4.4), as it stands at `now`. */
export interface GateSubject {
  capability: CapabilityRow;
  agent: AgentRow;
  /** The agent's use of its budget in the month of `now`. */
  spent: number;
  rules: GateRule[];
  now: Date;
}

/** Reads the gate's subject in one statement: the capability, the agent, its spending this month, every rule. */
export async function loadGateSubject(db: Queryable, capabilityId: string, agentId: string): Promise<GateSubject> {
  const now = new Date();
  const [row] = await db
    .select({
      capability: capabilities,
      agent: agents,
      spent: sql<number>`${spentThisMonthSql(agentId, usageMonth(now))}`.mapWith(Number),
      standing: sql<never[]>`${gateRulesSql.standing}`,
      learned: sql<never[]>`${gateRulesSql.learned}`,
    })
    .from(capabilities)
    .innerJoin(agents, eq(agents.id, agentId))
    .where(eq(capabilities.id, capabilityId));
  if (!row) {
    await findCapability(db, capabilityId);
    throw orgErrors.notFound('agent');
  }
  return { capability: row.capability, agent: row.agent, spent: row.spent, rules: toGateRules(row.standing, row.learned), now };
}

type VerdictSubject = GateSubject & { input: unknown; spaceId: string | null; operationId?: string };

/** The gate's inputs for `subject` and `input` (DESIGN 4.4), as `decide()` takes them and `gate_verdicts` keeps them. */
function gateInputs(subject: VerdictSubject): GateInputs {
  const { capability, agentBase } = gateSubjects(subject.capability, subject.agent);
  return { now: subject.now.toISOString(), capability, agent: { ...agentBase, spent: subject.spent }, input: subject.input, rules: subject.rules };
}

/** Stores a verdict with the inputs it was decided on. */
async function storeVerdict(db: Queryable, subject: VerdictSubject, inputs: GateInputs, verdict: GateVerdict): Promise<GateVerdict & { verdict_id: string }> {
  const id = newId('gv');
  await db.insert(gateVerdicts).values({
    id,
    capabilityId: subject.capability.id,
    agentId: subject.agent.id,
    spaceId: subject.spaceId,
    operationId: subject.operationId ?? null,
    verdict: verdict.verdict,
    reasons: verdict.reasons,
    ruleIds: verdict.rule_ids,
    shadow: verdict.shadow,
    inputs,
  });
  return { ...verdict, verdict_id: id };
}

/** Decides on `subject` and `input`, and stores the verdict with its inputs (DESIGN 4.4). Charges nothing. */
export async function evaluateGate(db: Queryable, subject: VerdictSubject): Promise<GateVerdict & { verdict_id: string }> {
  const inputs = gateInputs(subject);
  return storeVerdict(db, subject, inputs, decide(inputs));
}

/**
 * Decides for an operation about to run, and when the gate allows it charges the agent in the same step
 * (DESIGN 4.4: "Budgets hold exactly"). The spending read with the subject may be stale by the time the charge
 * lands — other processes charge the same agent — so an allowed action is charged only if the charge still fits
 * the budget (`chargeWithinBudget`); when it does not, the gate decides again on what was actually spent, which
 * pauses the action for a person like any other cost over the budget.
 */
async function decideAndCharge(db: Queryable, subject: VerdictSubject & { operationId: string }): Promise<GateVerdict & { verdict_id: string; charged: boolean }> {
  let inputs = gateInputs(subject);
  let verdict = decide(inputs);
  let charged = false;
  if (verdict.verdict === 'allow') {
    const charge = await chargeWithinBudget(db, subject.operationId, subject.agent.id, subject.capability.cost, subject.now);
    charged = charge.charged;
    if (!charged) {
      inputs = { ...inputs, agent: { ...inputs.agent, spent: charge.used } };
      verdict = decide(inputs);
      // The budget may have been lowered since it was read: the refused charge is the judge.
      if (verdict.verdict === 'allow') verdict = { ...verdict, verdict: 'require_approval', reasons: [overBudgetReason(subject.capability.cost, subject.agent, charge.used)] };
    }
  }
  return { ...(await storeVerdict(db, subject, inputs, verdict)), charged };
}

function overBudgetReason(cost: number, agent: AgentRow, used: number): string {
  return `the cost ${cost} is over the agent's remaining budget of ${Math.max((agent.budget ?? 0) - used, 0)} units this month`;
}

export const describedCapability = capabilityRecord.extend({
  /** What the gate would decide were the caller to run it now with input that matches its schema. */
  verdict: gateVerdictRecord,
});

export async function describeCapability(db: Queryable, id: string, caller: { personId: string; clientId: string }) {
  const agent = await clientAgent(db, caller.personId, caller.clientId);
  const subject = await loadGateSubject(db, id, agent.id);
  // Input conditions of rules cannot be judged without input: the verdict is for an empty object.
  const { verdict_id: _id, ...verdict } = await evaluateGate(db, { ...subject, input: {}, spaceId: null });
  return { ...toCapabilityRecord(subject.capability), verdict };
}

export interface ExecuteRequest {
  capabilityId: string;
  input: unknown;
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
  const capability = await findCapability(db, request.capabilityId);
  checkCapabilityInput(inputSchemaOf(capability), request.input);
  if (request.dryRun) {
    const subject = await loadGateSubject(db, capability.id, request.agentId);
    const { verdict_id: _id, ...verdict } = await evaluateGate(db, { ...subject, input: request.input, spaceId: request.spaceId });
    return { dryRun: verdict };
  }
  const operationId = await startOperation(ctx, db, {
    kind: 'capability',
    personId: request.personId,
    clientId: request.clientId,
    agentId: request.agentId,
    spaceId: request.spaceId,
    input: { capability_id: capability.id, input: request.input as Record<string, unknown> },
  });
  return { operationId };
}

/** The `capability` operation runner (operations/runners.ts). Safe to repeat: a decision is opened once per operation. */
export async function runCapability(ctx: OrgContext, operation: OperationRow): Promise<RunnerOutcome> {
  const { capability_id: capabilityId, input } = operation.input as { capability_id: string; input: unknown };
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

  const problem = await connectorProblem(ctx, capability.connector as Connector);
  if (problem) return { status: 'failed', error: failure('connector_failed', problem) };
  const { charged, ...verdict } = await decideAndCharge(ctx.db, { ...subject, input, spaceId: operation.spaceId, operationId: operation.id });
  if (verdict.verdict === 'deny') return { status: 'failed', error: failure('denied_by_rule', verdict.reasons.join('; ')) };
  if (verdict.verdict === 'require_approval') {
    // The decision and its expiry job together, or neither.
    const decisionId = await ctx.db.transaction((tx) => openDecision(ctx, tx, { operation, capability, agent, input, verdict }));
    return { status: 'paused', decisionId };
  }
  return runApproved(ctx, capability, agent, operation, input, { charged });
}

/**
 * A runner runs again after a crash (operations.ts), so the cost is charged with a mark on the operation, in
 * one statement (the mark and the charge happen together or not at all): the agent pays for an operation once.
 * A person's approval overrides the budget, so this charge has no limit.
 */
async function chargeOnce(ctx: OrgContext, operationId: string, agentId: string, cost: number): Promise<void> {
  const mark = sql`UPDATE ${operations} SET charged_at = now() WHERE id = ${operationId} AND charged_at IS NULL RETURNING id`;
  await ctx.db.execute(sql`WITH first AS (${mark}) ${chargeAgentStatement(agentId, cost, { from: sql`FROM first` })}`);
}

/** Thrown inside `chargeWithinBudget`'s transaction to undo the operation's mark when the charge does not fit. */
class OverBudget extends Error {
  constructor(readonly used: number) {
    super('over budget');
  }
}

/**
 * Marks the operation charged and adds `cost` to the agent's month only if the month's use stays within the
 * agent's budget (none: no limit), as one atomic step: the conditional upsert's `WHERE` is judged on the row it
 * has locked, so concurrent charges from any number of processes never add up past the budget. When it does
 * not fit, nothing is marked or charged and the month's use is returned. An operation already marked was
 * charged by an earlier run of the same operation.
 */
async function chargeWithinBudget(db: Queryable, operationId: string, agentId: string, cost: number, at: Date): Promise<{ charged: boolean; used: number }> {
  const month = usageMonth(at);
  const budget = sql`(SELECT budget FROM ${agents} WHERE id = ${agentId})`;
  try {
    return await db.transaction(async (tx) => {
      const marked = await queryRows(tx, sql`UPDATE ${operations} SET charged_at = now() WHERE id = ${operationId} AND charged_at IS NULL RETURNING id`);
      if (!marked.length) return { charged: true, used: -1 };
      const [row] = await queryRows<{ used: number }>(
        tx,
        sql`INSERT INTO ${agentMonthlyUsage} (agent_id, month, used)
          SELECT ${agentId}, ${month}, ${cost} WHERE ${cost} <= coalesce(${budget}, ${cost})
          ON CONFLICT (agent_id, month) DO UPDATE SET used = ${agentMonthlyUsage}.used + excluded.used, updated_at = now()
            WHERE ${agentMonthlyUsage}.used + excluded.used <= coalesce(${budget}, ${agentMonthlyUsage}.used + excluded.used)
          RETURNING used`,
      );
      if (row) return { charged: true, used: Number(row.used) };
      const [spent] = await queryRows<{ used: number }>(tx, sql`SELECT ${spentThisMonthSql(agentId, month)} AS used`);
      throw new OverBudget(Number(spent?.used ?? 0));
    });
  } catch (error) {
    if (error instanceof OverBudget) return { charged: false, used: error.used };
    throw error;
  }
}

async function runApproved(
  ctx: OrgContext,
  capability: CapabilityRow,
  agent: AgentRow,
  operation: OperationRow,
  input: unknown,
  { charged = false } = {},
): Promise<RunnerOutcome> {
  if (!charged) await chargeOnce(ctx, operation.id, agent.id, capability.cost);
  return runConnector(ctx, capability.connector as Connector, {
    operationId: operation.id,
    decisionId: operation.decisionId,
    capability: { id: capability.id, key: capability.key },
    agent: { id: agent.id, key: agent.key, name: agent.name },
    spaceId: operation.spaceId,
    input,
  });
}
