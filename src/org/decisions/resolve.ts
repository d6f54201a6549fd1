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
import { and, desc, eq, inArray, ne, or, isNull, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { canonicalJson } from '../../platform/canonical-json.js';
import { stateTable, type Transition } from '../../platform/state-table.js';
import type { Queryable } from '../../platform/database.js';
import { jobKind } from '../../platform/jobs.js';
import { toIso } from '../../platform/time.js';
import type { OrgContext } from '../context.js';
import { orgErrors } from '../errors.js';
import type { GateVerdict } from '../gate/index.js';
import { RISKS } from '../gate/index.js';
import { newId } from '../ids.js';
import { failOperation, failure, findOperation, resolvedByRecord, resumeOperation, toOperationRecord, toResolvedBy, operationRecord } from '../operations/operations.js';
import type { OperationRow } from '../operations/states.js';
import { createLearnedRule, mayGovern } from '../rules/records.js';
import { oauthClients } from '../../auth/schema.js';
import { agents, capabilities, decisions, operations, organization, people } from '../schema.js';

export const DECISION_STATUSES = ['pending', 'approved', 'denied', 'expired'] as const;
export type DecisionStatus = (typeof DECISION_STATUSES)[number];

interface DecisionTransition extends Transition<DecisionStatus> {
  /** A person resolves before the decision's expiry; the expiry job only after it. */
  readonly when: 'before_expiry' | 'after_expiry';
}

export const DECISION_TRANSITIONS = {
  approve: { from: ['pending'], to: 'approved', when: 'before_expiry' },
  deny: { from: ['pending'], to: 'denied', when: 'before_expiry' },
  expire: { from: ['pending'], to: 'expired', when: 'after_expiry' },
} as const satisfies Record<string, DecisionTransition>;

export type DecisionEvent = keyof typeof DECISION_TRANSITIONS;

export type DecisionRow = typeof decisions.$inferSelect;

export const decisionRecord = z.object({
  id: z.string(),
  status: z.enum(DECISION_STATUSES),
  action: z.object({
    capability_id: z.string(),
    capability_key: z.string(),
    capability_name: z.string(),
    input: z.unknown(),
    space_id: z.string().nullable(),
  }),
  agent: z.object({ id: z.string(), name: z.string() }),
  risk: z.enum(RISKS),
  reasons: z.array(z.string()),
  operation_id: z.string(),
  requested_at: z.string(),
  expires_at: z.string(),
  resolved_at: z.string().optional(),
  /** Who approved or denied it, and where (operations.ts `resolvedByRecord`). */
  resolved_by: resolvedByRecord.optional(),
  note: z.string().optional(),
});
export type DecisionRecord = z.infer<typeof decisionRecord>;

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
  ctx: OrgContext,
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
      input: paused.input as Record<string, unknown>,
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
  return created.id;
}

export async function findDecision(db: Queryable, id: string): Promise<DecisionRow | undefined> {
  const [row] = await db.select().from(decisions).where(eq(decisions.id, id));
  return row;
}

/**
 * Applies `event` with one conditional UPDATE, or throws `invalid_state` naming the decision's status; a pending
 * decision past its expiry is named expired.
 */
export const { move: moveDecision } = stateTable({
  table: decisions,
  transitions: DECISION_TRANSITIONS,
  stamp: () => ({ resolvedAt: sql`now()` }),
  guard: (event) => {
    const transition: DecisionTransition = DECISION_TRANSITIONS[event];
    return transition.when === 'before_expiry' ? sql`${decisions.expiresAt} > now()` : sql`${decisions.expiresAt} <= now()`;
  },
  explain: { past: sql<boolean>`${decisions.expiresAt} <= now()` },
  refusal: (current, event) => {
    const status = current.status === 'pending' && current.past ? 'expired' : current.status;
    if (status === 'pending') return orgErrors.invalidState(`the decision is not yet due to ${event}`, { status });
    return orgErrors.invalidState(`the decision is already ${status}, so it cannot be resolved again`, { status });
  },
  notFound: () => orgErrors.notFound('decision'),
});

/** Who resolves: a signed-in person in the inbox, or a person through an MCP client. */
export interface Resolver {
  person: { id: string; role: string };
  /** The MCP client, when the decision is resolved through one; null in the inbox. */
  clientId: string | null;
}

export interface Resolution {
  decisionId: string;
  outcome: 'approve' | 'deny';
  note?: string;
  /** Approve and remember: also allow this agent this capability from now on (DESIGN 4.4). */
  remember?: { until?: string; same_input?: boolean };
}

/** Resolves a decision in `db` (a transaction): approving resumes the operation, denying fails it `denied`. */
export async function resolveDecision(ctx: OrgContext, db: Queryable, resolution: Resolution, resolver: Resolver) {
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
  if (resolution.outcome === 'approve') {
    operation = await resumeOperation(db, moved.operationId);
    if (resolution.remember) {
      await createLearnedRule(db, {
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
  const [record] = await decisionsFor(db, resolver, { id: moved.id });
  return { decision: record, operation: toOperationRecord(operation) };
}

export const resolvedDecision = z.object({ decision: decisionRecord, operation: operationRecord });

/**
 * The decisions a resolver may see and resolve: over agents they govern (rules.ts `mayGovern`), and never
 * — through an MCP client — the actions that client asked for itself.
 */
export async function decisionsFor(
  db: Queryable,
  resolver: Resolver,
  filter: { id?: string; status?: DecisionStatus | 'all'; limit?: number } = {},
): Promise<DecisionRecord[]> {
  const conditions: (SQL | undefined)[] = [mayGovern(resolver.person)];
  if (filter.id) conditions.push(eq(decisions.id, filter.id));
  if (filter.status === 'pending') conditions.push(eq(decisions.status, 'pending'), sql`${decisions.expiresAt} > now()`);
  else if (filter.status === 'expired') conditions.push(or(eq(decisions.status, 'expired'), and(eq(decisions.status, 'pending'), sql`${decisions.expiresAt} <= now()`)));
  else if (filter.status && filter.status !== 'all') conditions.push(eq(decisions.status, filter.status));
  if (resolver.clientId) conditions.push(or(isNull(agents.clientId), ne(agents.clientId, resolver.clientId)));
  const rows = await db
    .select({
      decision: decisions,
      // A connected client's agent is named as the client registered itself: marked, so that an application
      // calling itself "Scribe" is never shown as the organization's agent Scribe.
      agentName: sql<string>`CASE WHEN ${agents.kind} = 'client' THEN ${agents.name} || ' (connected application)' ELSE ${agents.name} END`,
      capabilityKey: capabilities.key,
      capabilityName: capabilities.name,
      resolverName: people.name,
      resolverClientName: oauthClients.name,
    })
    .from(decisions)
    .innerJoin(agents, eq(agents.id, decisions.agentId))
    .innerJoin(capabilities, eq(capabilities.id, decisions.capabilityId))
    .leftJoin(people, eq(people.id, decisions.resolvedBy))
    .leftJoin(oauthClients, eq(oauthClients.id, decisions.resolvedVia))
    .where(and(...conditions))
    .orderBy(desc(decisions.requestedAt))
    .limit(filter.limit ?? 100);
  return rows.map(({ decision, agentName, capabilityKey, capabilityName, resolverName, resolverClientName }) =>
    toDecisionRecord(decision, agentName, capabilityKey, capabilityName, resolverName, resolverClientName),
  );
}

function toDecisionRecord(
  row: DecisionRow,
  agentName: string,
  capabilityKey: string,
  capabilityName: string,
  resolverName: string | null,
  resolverClientName: string | null,
): DecisionRecord {
  // A pending decision past its time is expired even before the expiry job has run.
  const status = row.status === 'pending' && Date.parse(toIso(row.expiresAt)) <= Date.now() ? 'expired' : row.status;
  return {
    id: row.id,
    status,
    action: { capability_id: row.capabilityId, capability_key: capabilityKey, capability_name: capabilityName, input: row.input, space_id: row.spaceId },
    agent: { id: row.agentId, name: agentName },
    risk: row.risk,
    reasons: row.reasons as string[],
    operation_id: row.operationId,
    requested_at: toIso(row.requestedAt),
    expires_at: toIso(row.expiresAt),
    ...(row.resolvedAt && row.status !== 'pending' ? { resolved_at: toIso(row.resolvedAt) } : {}),
    ...(row.resolvedBy && resolverName !== null ? { resolved_by: toResolvedBy(row.resolvedBy, resolverName, row.resolvedVia, resolverClientName) } : {}),
    ...(row.note ? { note: row.note } : {}),
  };
}

export async function countPendingDecisions(db: Queryable, person: { id: string; role: string }): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(decisions)
    .innerJoin(agents, eq(agents.id, decisions.agentId))
    .where(and(eq(decisions.status, 'pending'), sql`${decisions.expiresAt} > now()`, mayGovern(person)));
  return row?.count ?? 0;
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
      if (operation?.status === 'paused') await failOperation(tx, decision.operationId, failure('expired'));
    });
  });
}

/** What a person weighs before deciding (issue 16 item 9): who asked and through what, the cost, where it goes. */
export interface DecisionContext {
  askedBy: { name: string; email: string } | null;
  client: { id: string; name: string | null } | null;
  cost: number;
  /** The agent's monthly budget and what it used this month; budget null when it has none. */
  budget: number | null;
  used: number;
  /** Where the connector sends the action: a webhook's origin and path, or the content service's action. */
  destination: string;
}

export async function decisionContexts(db: Queryable, decisionIds: readonly string[]): Promise<Map<string, DecisionContext>> {
  if (decisionIds.length === 0) return new Map();
  const rows = await db
    .select({
      id: decisions.id,
      askerName: people.name,
      askerEmail: people.email,
      clientId: operations.clientId,
      clientName: oauthClients.name,
      cost: capabilities.cost,
      connector: capabilities.connector,
      budget: agents.budget,
      used: sql<number>`coalesce((SELECT used FROM agent_usage WHERE agent_id = ${decisions.agentId} AND month = to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM')), 0)`.mapWith(Number),
    })
    .from(decisions)
    .innerJoin(operations, eq(operations.id, decisions.operationId))
    .innerJoin(capabilities, eq(capabilities.id, decisions.capabilityId))
    .innerJoin(agents, eq(agents.id, decisions.agentId))
    .leftJoin(people, eq(people.id, operations.personId))
    .leftJoin(oauthClients, eq(oauthClients.id, operations.clientId))
    .where(inArray(decisions.id, [...decisionIds]));
  return new Map(
    rows.map((row) => [
      row.id,
      {
        askedBy: row.askerName !== null && row.askerEmail !== null ? { name: row.askerName, email: row.askerEmail } : null,
        client: row.clientId ? { id: row.clientId, name: row.clientName } : null,
        cost: row.cost,
        budget: row.budget,
        used: row.used,
        destination: describeDestination(row.connector as { kind: string; url?: string; action?: string }),
      },
    ]),
  );
}

function describeDestination(connector: { kind: string; url?: string; action?: string }): string {
  if (connector.kind === 'content') return `the content service (${connector.action})`;
  try {
    const url = new URL(connector.url ?? '');
    return `${url.origin}${url.pathname}`;
  } catch {
    return String(connector.url);
  }
}
