/**
 * The gate's database side (DESIGN 4.4): the gate itself (gate/) never touches the database, so this module
 * loads what it weighs — the capability, the acting agent, its spending this month, every rule — stores each
 * verdict with the inputs it was decided on, and charges an allowed action within the agent's budget.
 */
import { and, eq, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { hotStatement, queryRows, type Queryable } from '../../platform/database.js';
import { activityStatement, type NewActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import { decide, type GateInputs, type GateRule, type GateVerdict } from '../gate/index.js';
import { newId } from '../ids.js';
import { agents, capabilities, gateVerdicts, operations, organization } from '../schema.js';
import { gateRulesSql, toGateRules } from '../rules/records.js';
import { announceBudgetCrossing, budgetSql, chargeAgentStatement, spentThisMonthSql, thresholdCrossedSql, usageMonth } from '../agents/usage.js';
import { toCapabilityRecord, capabilityRecord, findCapability, type CapabilityRow, type AgentRow, gateVerdictRecord } from './catalogue.js';

/** DESIGN 4.1: the acting agent of a client's call is the client's own agent (one per client and person). */
export async function clientAgent(db: Queryable, personId: string, clientId: string): Promise<AgentRow> {
  const [row] = await db.select().from(agents).where(clientAgentOf(personId, clientId));
  if (!row) throw notConnected();
  return row;
}

/** `clientAgent` and `findCapability` in one read, refused as they are, in that order. */
export async function clientAgentAndCapability(db: Queryable, caller: { personId: string; clientId: string }, capabilityId: string): Promise<{ agent: AgentRow; capability: CapabilityRow }> {
  const [row] = await selectClientAgentAndCapability(db, { ...caller, capabilityId });
  if (!row) throw notConnected();
  if (!row.capability) throw orgErrors.notFound('capability');
  return { agent: row.agent, capability: row.capability };
}

/** Read on every execute_capability call. */
const selectClientAgentAndCapability = hotStatement('client_agent_and_capability', (db) =>
  db
    .select({ agent: agents, capability: capabilities })
    .from(agents)
    .leftJoin(capabilities, eq(capabilities.id, sql.placeholder('capabilityId')))
    .where(clientAgentOf(sql.placeholder('personId'), sql.placeholder('clientId'))),
);

const clientAgentOf = (personId: string | Placeholder, clientId: string | Placeholder) => and(eq(agents.kind, 'client'), eq(agents.clientId, clientId), eq(agents.responsiblePersonId, personId));

const notConnected = () => orgErrors.forbidden('this client is not connected as an agent of the organization: connect it again through consent');

export function gateSubjects(capability: CapabilityRow, agent: AgentRow) {
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
  /** The organization's two-person rule by risk tier (DESIGN 4.8). */
  approvalsByRisk: GateInputs['approvalsByRisk'];
  now: Date;
}

/** Reads the gate's subject in one statement: the capability, the agent, its spending this month, every rule, the approvals by risk. */
export async function loadGateSubject(db: Queryable, capabilityId: string, agentId: string): Promise<GateSubject> {
  const now = new Date();
  const [row] = await selectGateSubject(db, { capabilityId, agentId, month: usageMonth(now) });
  if (!row) {
    await findCapability(db, capabilityId);
    throw orgErrors.notFound('agent');
  }
  return {
    capability: row.capability,
    agent: row.agent,
    spent: row.spent,
    rules: toGateRules(row.standing, row.learned),
    approvalsByRisk: row.approvalsByRisk ?? {},
    now,
  };
}

/** Read on every run of a capability (execute_capability's, a resumed one's), every dry run and describe_capability. */
const selectGateSubject = hotStatement('gate_subject', (db) =>
  db
    .select({
      capability: capabilities,
      agent: agents,
      spent: sql<number>`${spentThisMonthSql(sql.placeholder('agentId'), sql.placeholder('month'))}`.mapWith(Number),
      standing: sql<never[]>`${gateRulesSql.standing}`,
      learned: sql<never[]>`${gateRulesSql.learned}`,
      approvalsByRisk: sql<GateInputs['approvalsByRisk'] | null>`(SELECT ${organization.approvalsByRisk} FROM ${organization} LIMIT 1)`,
    })
    .from(capabilities)
    .innerJoin(agents, eq(agents.id, sql.placeholder('agentId')))
    .where(eq(capabilities.id, sql.placeholder('capabilityId'))),
);

type VerdictSubject = GateSubject & {
  input: unknown;
  spaceId: string | null;
  operationId?: string;
  /** On whose behalf and through which client the gate is asked (for the activity log). */
  asker: { personId: string; clientId: string | null };
};

/** The gate's inputs for `subject` and `input` (DESIGN 4.4), as `decide()` takes them and `gate_verdicts` keeps them. */
function gateInputs(subject: VerdictSubject): GateInputs {
  const { capability, agentBase } = gateSubjects(subject.capability, subject.agent);
  return {
    now: subject.now.toISOString(),
    capability,
    agent: { ...agentBase, spent: subject.spent },
    input: subject.input,
    rules: subject.rules,
    approvalsByRisk: subject.approvalsByRisk,
  };
}

/** Stores a verdict with the inputs it was decided on, and its `gate.verdict` activity entry with the reasons, in one statement. */
async function storeVerdict(db: Queryable, subject: VerdictSubject, inputs: GateInputs, verdict: GateVerdict): Promise<GateVerdict & { verdict_id: string }> {
  const { id, entry, insert } = verdictWrites(subject, inputs, verdict);
  await queryRows(db, sql`WITH verdict_entry AS (${entry}) ${insert}`);
  return { ...verdict, verdict_id: id };
}

/** The two writes that store a verdict — its row and its `gate.verdict` entry — each made only `where` holds. */
function verdictWrites(subject: VerdictSubject, inputs: GateInputs, verdict: GateVerdict, where: SQL = sql`true`): { id: string; entry: SQL; insert: SQL } {
  const id = newId('gv');
  const told: NewActivity = {
    kind: 'gate.verdict',
    summary: `the gate said ${verdict.verdict} to ${subject.agent.name} running ${subject.capability.key}${verdict.reasons.length ? `: ${verdict.reasons.join('; ')}` : ''}`,
    spaceId: subject.spaceId,
    personId: subject.asker.personId,
    clientId: subject.asker.clientId,
    agentId: subject.agent.id,
    capabilityId: subject.capability.id,
    operationId: subject.operationId ?? null,
    subject: id,
    details: {
      verdict: verdict.verdict,
      reasons: verdict.reasons,
      rule_ids: verdict.rule_ids,
      shadow: verdict.shadow,
      ...(verdict.approvals ? { approvals: verdict.approvals } : {}),
      ...(subject.operationId ? {} : { trial: true }),
    },
  };
  const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;
  const insert = sql`INSERT INTO ${gateVerdicts} (id, capability_id, agent_id, space_id, operation_id, verdict, reasons, rule_ids, shadow, inputs)
    SELECT ${id}, ${subject.capability.id}, ${subject.agent.id}, ${subject.spaceId}::text, ${subject.operationId ?? null}::text, ${verdict.verdict},
      ${json(verdict.reasons)}, ${json(verdict.rule_ids)}, ${json(verdict.shadow)}, ${json(inputs)} WHERE ${where}`;
  return { id, entry: activityStatement({ entries: [told], where }), insert };
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
 * pauses the action for a person like any other cost over the budget. An allowed verdict is stored with its
 * charge, in its transaction.
 */
export async function decideAndCharge(db: Queryable, subject: VerdictSubject & { operationId: string }): Promise<GateVerdict & { verdict_id: string; charged: boolean }> {
  const inputs = gateInputs(subject);
  const verdict = decide(inputs);
  if (verdict.verdict !== 'allow') return { ...(await storeVerdict(db, subject, inputs, verdict)), charged: false };
  const atOnce = await chargeAndStoreAtOnce(db, subject, inputs, verdict);
  if (atOnce) return { ...atOnce, charged: true };
  // Over the budget, across its 80 % line, or charged before: the transaction below settles each exactly.
  const charge = await chargeWithinBudget(db, subject, (tx) => storeVerdict(tx, subject, inputs, verdict));
  if ('stored' in charge) return { ...charge.stored, charged: true };
  const spentInputs = { ...inputs, agent: { ...inputs.agent, spent: charge.used } };
  let overBudget = decide(spentInputs);
  // The budget may have been lowered since it was read: the refused charge is the judge.
  if (overBudget.verdict === 'allow') overBudget = { ...overBudget, verdict: 'require_approval', reasons: [overBudgetReason(subject.capability.cost, subject.agent, charge.used)] };
  return { ...(await storeVerdict(db, subject, spentInputs, overBudget)), charged: false };
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
  const { verdict_id: _id, ...verdict } = await evaluateGate(db, { ...subject, input: {}, spaceId: null, asker: caller });
  return { ...toCapabilityRecord(subject.capability), verdict };
}

/**
 * The usual allowed action, in one statement: the operation is locked and found uncharged, the agent charged
 * while the month's use stays within its budget and short of crossing its 80 % line, the operation marked
 * charged, and the verdict stored with its entry — all or nothing, as `chargeWithinBudget` does in a transaction
 * of four statements. The lock keeps a second run of the same operation from charging it twice: it waits, then
 * finds it charged. Undefined when the charge did not land (over the budget, across the line, or charged
 * before): nothing was written, and `chargeWithinBudget` decides.
 */
async function chargeAndStoreAtOnce(
  db: Queryable,
  subject: VerdictSubject & { operationId: string },
  inputs: GateInputs,
  verdict: GateVerdict,
): Promise<(GateVerdict & { verdict_id: string }) | undefined> {
  const { operationId, agent, capability, now } = subject;
  const { cost } = capability;
  const budget = budgetSql(agent.id);
  const fits = (before: SQL) => sql`(${budget} IS NULL OR (${before} + ${cost} <= ${budget} AND NOT ${thresholdCrossedSql(before, cost, budget)}))`;
  const charged = sql`EXISTS (SELECT FROM mark)`;
  const { id, entry, insert } = verdictWrites(subject, inputs, verdict, charged);
  const [row] = await queryRows<{ charged: boolean }>(
    db,
    sql`WITH uncharged AS (SELECT id FROM ${operations} WHERE id = ${operationId} AND charged_at IS NULL FOR UPDATE),
      charge AS (${chargeAgentStatement(agent.id, cost, { from: sql`FROM uncharged`, at: now, fits })} RETURNING used),
      mark AS (UPDATE ${operations} SET charged_at = now() WHERE id = ${operationId} AND EXISTS (SELECT FROM charge) RETURNING id),
      verdict_entry AS (${entry}),
      verdict AS (${insert})
      SELECT ${charged} AS charged`,
  );
  return row?.charged ? { ...verdict, verdict_id: id } : undefined;
}

/** Thrown inside `chargeWithinBudget`'s transaction to undo the operation's mark when the charge does not fit. */
class OverBudget extends Error {
  constructor() {
    super('over budget');
  }
}

/**
 * Marks the operation charged and adds `cost` to the agent's month only if the month's use stays within the
 * agent's budget (none: no limit), as one atomic step: the conditional upsert's `WHERE` is judged on the row it
 * has locked, so concurrent charges from any number of processes never add up past the budget. The mark and the
 * charge are one statement; `andThen` (storing the verdict) runs in their transaction. When the charge does not
 * fit, nothing is marked, charged or stored, and the month's use is returned. An operation already marked was
 * charged by an earlier run of the same operation.
 */
async function chargeWithinBudget<T>(
  db: Queryable,
  { operationId, agent, capability, now }: { operationId: string; agent: AgentRow; capability: CapabilityRow; now: Date },
  andThen: (tx: Queryable) => Promise<T>,
): Promise<{ stored: T } | { used: number }> {
  const month = usageMonth(now);
  const { cost } = capability;
  const budget = budgetSql(agent.id);
  const fits = (before: SQL) => sql`${before} + ${cost} <= coalesce(${budget}, ${before} + ${cost})`;
  try {
    return await db.transaction(async (tx) => {
      const [charge] = await queryRows<{ marked: boolean; used: number | null; budget: number | null }>(
        tx,
        sql`WITH mark AS (UPDATE ${operations} SET charged_at = now() WHERE id = ${operationId} AND charged_at IS NULL RETURNING id),
          charge AS (${chargeAgentStatement(agent.id, cost, { from: sql`FROM mark`, at: now, fits })} RETURNING used)
          SELECT EXISTS (SELECT FROM mark) AS marked, (SELECT used FROM charge) AS used, ${budget} AS budget`,
      );
      if (charge.marked && charge.used === null) throw new OverBudget();
      if (charge.used !== null) {
        await announceBudgetCrossing(tx, { agentId: agent.id, month, cost, used: Number(charge.used), budget: charge.budget === null ? null : Number(charge.budget) });
      }
      return { stored: await andThen(tx) };
    });
  } catch (error) {
    if (!(error instanceof OverBudget)) throw error;
    const [spent] = await queryRows<{ used: number }>(db, sql`SELECT ${spentThisMonthSql(agent.id, month)} AS used`);
    return { used: Number(spent?.used ?? 0) };
  }
}
