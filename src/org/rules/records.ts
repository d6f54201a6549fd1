/**
 * Standing rules (DESIGN 4.2, 4.4), from three sources kept apart:
 *
 * - the organization file's rules (`managed_by = 'file'`): the file declares its whole list, so applying it
 *   replaces that list — keeping the ids of the rules it declares again unchanged, which stored verdicts refer to;
 * - the console's rules (`managed_by = 'console'`): applying the file never removes or changes them, and they
 *   come after the file's in `position` order;
 * - learned rules, made when a person approves a decision "and remembers" it: allow this agent this
 *   capability (optionally only for the same input) until an optional date. Re-applying the file never
 *   touches them; the person who may resolve such decisions revokes them on /rules.
 *
 * The gate reads them as one list of `GateRule`s; every matching rule counts.
 */
import { isDeepStrictEqual } from 'node:util';
import { and, asc, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import { inTransaction, queryRows, type Queryable } from '../../platform/database.js';
import { recordActivity } from '../activity/records.js';
import { toIso } from '../../platform/time.js';
import { orgErrors } from '../errors.js';
import type { GateRule, InputCondition, RuleConditions } from '../gate/index.js';
import { newId } from '../ids.js';
import { visibleAgents } from '../agents/overview.js';
import type { ReadScope } from '../read-scope.js';
import { agents, capabilities, learnedRules, people, standingRules } from '../schema.js';

export interface RuleInput {
  name: string;
  when: Record<string, unknown>;
  then: 'deny' | 'require_approval' | 'allow';
  mode: 'enforce' | 'shadow';
  /** How many different people must approve (the two-person rule); none or null means one. */
  approvals?: number | null;
}

/** What makes two rules the same rule: everything but their id and place. */
function ruleContent(rule: RuleInput) {
  return { name: rule.name, when: rule.when, then: rule.then, mode: rule.mode, approvals: rule.approvals ?? null };
}

/**
 * Makes the file's rules exactly `rules`, in that order, first; the console's rules keep their order after them.
 * A declared rule equal to a stored rule of the file keeps that rule (and its id); one equal to a console rule
 * takes that rule over (`adopted`: the round trip of `org export`, which writes the console's rules too) rather
 * than copying it. `changed`: a rule of the file was added, removed or moved.
 */
export async function replaceStandingRules(db: Queryable, rules: RuleInput[]): Promise<{ changed: boolean; adopted: number }> {
  const stored = await db
    .select({ id: standingRules.id, name: standingRules.name, when: standingRules.when, then: standingRules.then, mode: standingRules.mode, approvals: standingRules.approvals, managedBy: standingRules.managedBy })
    .from(standingRules)
    .orderBy(asc(standingRules.position), asc(standingRules.createdAt), asc(standingRules.id));
  const fileRules = stored.filter((rule) => rule.managedBy === 'file');
  if (isDeepStrictEqual(fileRules.map((rule) => ruleContent(rule as RuleInput)), rules.map(ruleContent))) return { changed: false, adopted: 0 };

  const unused = new Set(stored.map((rule) => rule.id));
  const take = (rule: RuleInput, source: 'file' | 'console') => {
    const found = stored.find((row) => row.managedBy === source && unused.has(row.id) && isDeepStrictEqual(ruleContent(row as RuleInput), ruleContent(rule)));
    if (found) unused.delete(found.id);
    return found?.id;
  };
  const declared = rules.map((rule) => {
    const kept = take(rule, 'file');
    const adopted = kept ? undefined : take(rule, 'console');
    return { rule, id: kept ?? adopted ?? newId('rul'), kept: !!kept, adopted: !!adopted };
  });
  const dropped = fileRules.filter((rule) => unused.has(rule.id)).map((rule) => rule.id);
  const keptIds = declared.filter((entry) => entry.kept).map((entry) => entry.id);
  const changed = dropped.length > 0 || declared.some((entry) => !entry.kept && !entry.adopted) || !isDeepStrictEqual(keptIds, fileRules.map((rule) => rule.id).filter((id) => keptIds.includes(id)));

  if (dropped.length) await db.delete(standingRules).where(inArray(standingRules.id, dropped));
  const fresh = declared.filter((entry) => !entry.kept && !entry.adopted);
  if (fresh.length) {
    await db.insert(standingRules).values(fresh.map(({ rule, id }) => ({ id, position: 0, managedBy: 'file' as const, ...ruleContent(rule) })));
  }
  // The file's rules first, in its order, then the console's in theirs.
  const order = [...declared.map((entry) => entry.id), ...stored.filter((rule) => rule.managedBy === 'console' && unused.has(rule.id)).map((rule) => rule.id)];
  for (const [position, id] of order.entries()) {
    const adopted = declared.some((entry) => entry.id === id && entry.adopted);
    await db.update(standingRules).set(adopted ? { position, managedBy: 'file' } : { position }).where(eq(standingRules.id, id));
  }
  return { changed, adopted: declared.filter((entry) => entry.adopted).length };
}

/**
 * Every rule the gate weighs now, as two JSON lists to read in one statement with the gate's other inputs
 * (capabilities/gate-inputs.ts): the file's rules in their order, then the learned ones neither revoked nor past their date.
 */
export const gateRulesSql = {
  standing: sql`coalesce((
    SELECT json_agg(json_build_object('id', id, 'name', name, 'when', "when", 'then', "then", 'mode', mode, 'approvals', approvals) ORDER BY position)
    FROM ${standingRules}), '[]')`,
  learned: sql`coalesce((
    SELECT json_agg(json_build_object('id', l.id, 'agent_id', l.agent_id, 'capability_id', l.capability_id,
      'input_conditions', l.input_conditions, 'until', l.until::text, 'capability_key', c.key))
    FROM ${learnedRules} l JOIN ${capabilities} c ON c.id = l.capability_id
    WHERE l.revoked_at IS NULL AND (l.until IS NULL OR l.until > now())), '[]')`,
};

interface StandingRuleJson {
  id: string;
  name: string;
  when: RuleConditions;
  then: GateRule['then'];
  mode: GateRule['mode'];
  approvals: number | null;
}

interface LearnedRuleJson {
  id: string;
  agent_id: string;
  capability_id: string;
  input_conditions: InputCondition[] | null;
  until: string | null;
  capability_key: string;
}

/** The two lists of `gateRulesSql` as the gate's rules. */
export function toGateRules(standing: StandingRuleJson[], learned: LearnedRuleJson[]): GateRule[] {
  return [
    ...standing.map((rule) => ({ id: rule.id, name: rule.name, when: rule.when, then: rule.then, mode: rule.mode, approvals: rule.approvals })),
    ...learned.map((rule) => ({
      id: rule.id,
      name: `learned: allow ${rule.capability_key}`,
      when: {
        agent: rule.agent_id,
        capability: rule.capability_id,
        ...(rule.input_conditions ? { input: rule.input_conditions } : {}),
      },
      then: 'allow' as const,
      mode: 'enforce' as const,
      until: rule.until ? toIso(rule.until) : null,
    })),
  ];
}

/** Every rule the gate weighs now (`gateRulesSql`) on its own. */
export async function loadGateRules(db: Queryable): Promise<GateRule[]> {
  const [row] = await queryRows<{ standing: never[]; learned: never[] }>(db, sql`SELECT ${gateRulesSql.standing} AS standing, ${gateRulesSql.learned} AS learned`);
  return toGateRules(row.standing, row.learned);
}

export const learnedRuleRecord = z.object({
  id: z.string(),
  agent: z.object({ id: z.string(), name: z.string() }),
  capability: z.object({ id: z.string(), key: z.string(), name: z.string() }),
  /** Null: any input; otherwise only the input the remembered decision carried. */
  input: z.unknown().nullable(),
  until: z.string().nullable(),
  created_by: z.string().nullable(),
  decision_id: z.string().nullable(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
});
export type LearnedRuleRecord = z.infer<typeof learnedRuleRecord>;

export interface NewLearnedRule {
  agentId: string;
  capabilityId: string;
  /** Limit the rule to exactly this input. */
  sameInput?: unknown;
  until?: string | null;
  createdBy: string;
  decisionId: string;
}

export async function createLearnedRule(db: Queryable, rule: NewLearnedRule): Promise<string> {
  const id = newId('lr');
  await db.insert(learnedRules).values({
    id,
    agentId: rule.agentId,
    capabilityId: rule.capabilityId,
    inputConditions: rule.sameInput === undefined ? null : [{ path: '', op: 'eq', value: rule.sameInput }],
    until: rule.until ?? null,
    createdBy: rule.createdBy,
    decisionId: rule.decisionId,
  });
  return id;
}

/**
 * The learned rules a person may see and revoke: those over agents they are responsible for, or all of
 * them for an owner or admin (the same people who resolve the decisions such rules skip).
 */
export async function listLearnedRules(db: Queryable, person: { id: string; role: string }): Promise<LearnedRuleRecord[]> {
  const rows = await db
    .select({ rule: learnedRules, agentName: agents.name, capability: { id: capabilities.id, key: capabilities.key, name: capabilities.name }, creator: people.email })
    .from(learnedRules)
    .innerJoin(agents, eq(agents.id, learnedRules.agentId))
    .innerJoin(capabilities, eq(capabilities.id, learnedRules.capabilityId))
    .leftJoin(people, eq(people.id, learnedRules.createdBy))
    .where(and(isNull(learnedRules.revokedAt), mayGovern(person)))
    .orderBy(desc(learnedRules.createdAt));
  return rows.map(({ rule, agentName, capability, creator }) => ({
    id: rule.id,
    agent: { id: rule.agentId, name: agentName },
    capability,
    input: rule.inputConditions ? rule.inputConditions[0].value : null,
    until: rule.until ? toIso(rule.until) : null,
    created_by: creator,
    decision_id: rule.decisionId,
    created_at: toIso(rule.createdAt),
    revoked_at: null,
  }));
}

/** Revokes a rule the person governs, with its `rule.revoked` activity entry. */
export async function revokeLearnedRule(db: Queryable, id: string, person: { id: string; role: string }): Promise<void> {
  await inTransaction(db, async (tx) => {
    const [row] = await tx
      .update(learnedRules)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(learnedRules.id, id), isNull(learnedRules.revokedAt), sql`${learnedRules.agentId} IN (SELECT ${agents.id} FROM ${agents} WHERE ${mayGovern(person)})`))
      .returning({ id: learnedRules.id, agentId: learnedRules.agentId, capabilityId: learnedRules.capabilityId, decisionId: learnedRules.decisionId });
    if (!row) throw orgErrors.notFound('learned rule');
    await recordActivity(tx, {
      kind: 'rule.revoked',
      summary: 'revoked a learned rule: the agent asks again before running the capability',
      personId: person.id,
      agentId: row.agentId,
      capabilityId: row.capabilityId,
      subject: row.id,
      details: { decision_id: row.decisionId },
    });
  });
}

/** Owners and admins govern every agent; anyone else the agents they are responsible for. */
export function governsEveryAgent(person: { role: string }): boolean {
  return person.role === 'owner' || person.role === 'admin';
}

/** `governsEveryAgent` as a condition on `agents`. */
export function mayGovern(person: { id: string; role: string }) {
  return governsEveryAgent(person) ? sql`true` : eq(agents.responsiblePersonId, person.id);
}

/** A rule that may decide a capability's executions, as the console's capability page lists it. */
export interface RuleConcerning {
  id: string;
  name: string;
  /** `file`: declared in the organization file; `console`: made by an owner or admin on /rules. */
  source: 'file' | 'console' | 'learned';
  then: GateRule['then'];
  mode: GateRule['mode'];
  /** The conditions beyond the capability (agent, risk, time, input) that must also hold. */
  when: RuleConditions;
  until: string | null;
}

const MAX_RULES = 200;

/**
 * The rules that can match an execution of `capability`: the standing rules (the file's and the console's) naming it (by key or id) or naming no
 * capability, unless their risk condition excludes its risk; and the learned rules for it still in force, over the
 * agents the reader may see (another person's connected client is theirs).
 */
export async function rulesConcerning(db: Queryable, scope: ReadScope, capability: { id: string; key: string; risk: string }): Promise<RuleConcerning[]> {
  const standing = await db.select().from(standingRules).orderBy(asc(standingRules.position)).limit(MAX_RULES);
  const names = (value: string | readonly string[] | undefined) => (value === undefined ? undefined : typeof value === 'string' ? [value] : value);
  const fromFile = standing
    .map((rule) => ({ ...rule, when: rule.when as RuleConditions }))
    .filter(({ when }) => {
      const wanted = names(when.capability);
      const risks = names(when.risk);
      return (!wanted || wanted.includes(capability.key) || wanted.includes(capability.id)) && (!risks || risks.includes(capability.risk));
    })
    .map(({ id, name, when, then, mode, managedBy }): RuleConcerning => ({ id, name, source: managedBy, then, mode, when, until: null }));
  const learned = await db
    .select({ rule: learnedRules, agentName: agents.name })
    .from(learnedRules)
    .innerJoin(agents, eq(agents.id, learnedRules.agentId))
    .where(
      and(eq(learnedRules.capabilityId, capability.id), isNull(learnedRules.revokedAt), sql`(${learnedRules.until} IS NULL OR ${learnedRules.until} > now())`, visibleAgents(scope)),
    )
    .orderBy(desc(learnedRules.createdAt))
    .limit(MAX_RULES);
  return [
    ...fromFile,
    ...learned.map(({ rule, agentName }): RuleConcerning => ({
      id: rule.id,
      name: `learned: allow ${agentName}`,
      source: 'learned',
      then: 'allow',
      mode: 'enforce',
      when: { agent: agentName, ...(rule.inputConditions ? { input: rule.inputConditions as InputCondition[] } : {}) },
      until: rule.until ? toIso(rule.until) : null,
    })),
  ];
}
