/** Decisions as people and clients see them: the record, who may see which, and what a person weighs before deciding. */
import { and, desc, eq, inArray, ne, or, isNull, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import { toIso } from '../../platform/time.js';
import { RISKS } from '../gate/index.js';
import { resolvedByRecord, toResolvedBy, operationRecord } from '../operations/operations.js';
import { governsEveryAgent, mayGovern } from '../rules/records.js';
import { shownClientName } from '../../auth/clients.js';
import { oauthClients } from '../../auth/schema.js';
import { agents, capabilities, decisionApprovals, decisions, operations, people } from '../schema.js';
import { DECISION_STATUSES, type DecisionStatus, type DecisionRow } from './states.js';

/** Who resolves: a signed-in person in the inbox, or a person through an MCP client. */
export interface Resolver {
  person: { id: string; role: string };
  /** The MCP client, when the decision is resolved through one; null in the inbox. */
  clientId: string | null;
}

/** One person's approval of a decision that needs several (DESIGN 4.8): who, where (as `resolved_by` says it), when. */
export const approvalRecord = resolvedByRecord.extend({ at: z.string(), note: z.string().optional() });

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
  /** Who approved or denied it, and where (operations/operations.ts `resolvedByRecord`). */
  resolved_by: resolvedByRecord.optional(),
  note: z.string().optional(),
  /** How many different people must approve before the action runs (DESIGN 4.8's two-person rule); 1 usually. */
  approvals_required: z.number().int(),
  /** The approvals given so far, oldest first; the action ran at the last required one. */
  approvals: z.array(approvalRecord),
});
export type DecisionRecord = z.infer<typeof decisionRecord>;

export const resolvedDecision = z.object({ decision: decisionRecord, operation: operationRecord });

/**
 * The decisions a resolver may see and resolve: over agents they govern (rules/records.ts `mayGovern`), and never
 * — through an MCP client — the actions that client asked for itself. Newest request first; `resolved` (the
 * inbox's "Recently resolved": approved, denied, or expired by the expiry job) newest resolution first.
 */
export async function decisionsFor(
  db: Queryable,
  resolver: Resolver,
  filter: { id?: string; status?: DecisionStatus | 'all' | 'resolved'; limit?: number } = {},
): Promise<DecisionRecord[]> {
  const conditions: (SQL | undefined)[] = [mayGovern(resolver.person)];
  if (filter.id) conditions.push(eq(decisions.id, filter.id));
  if (filter.status === 'pending') conditions.push(eq(decisions.status, 'pending'), sql`${decisions.expiresAt} > now()`);
  else if (filter.status === 'expired') conditions.push(or(eq(decisions.status, 'expired'), and(eq(decisions.status, 'pending'), sql`${decisions.expiresAt} <= now()`)));
  else if (filter.status === 'resolved') conditions.push(ne(decisions.status, 'pending'));
  else if (filter.status && filter.status !== 'all') conditions.push(eq(decisions.status, filter.status));
  if (resolver.clientId) conditions.push(or(isNull(agents.clientId), ne(agents.clientId, resolver.clientId)));
  const rows = await selectDecisions(db)
    .where(and(...conditions))
    .orderBy(desc(filter.status === 'resolved' ? decisions.resolvedAt : decisions.requestedAt))
    .limit(filter.limit ?? 100);
  return rows.map(toDecisionRecord);
}

/**
 * The decision an operation paused on, for anyone who may see the operation (the console's operation page):
 * seeing is not governing, so `mayGovern` does not narrow it.
 */
export async function findDecisionRecord(db: Queryable, id: string): Promise<DecisionRecord | undefined> {
  const [row] = await selectDecisions(db).where(eq(decisions.id, id));
  return row ? toDecisionRecord(row) : undefined;
}

function selectDecisions(db: Queryable) {
  return db
    .select({
      decision: decisions,
      // A connected client's agent is named as the client registered itself: marked, so that an application
      // calling itself "Scribe" is never shown as the organization's agent Scribe.
      agentName: sql<string>`CASE WHEN ${agents.kind} = 'client' THEN ${agents.name} || ' (connected application)' ELSE ${agents.name} END`,
      capabilityKey: capabilities.key,
      capabilityName: capabilities.name,
      resolverName: people.name,
      resolverClientName: oauthClients.name,
      approvals: sql<ApprovalJson[]>`coalesce((
        SELECT json_agg(json_build_object('person_id', a.person_id, 'name', p.name, 'via', a.via, 'client_name', c.name, 'at', a.created_at, 'note', a.note)
          ORDER BY a.created_at, a.person_id)
        FROM ${decisionApprovals} a JOIN ${people} p ON p.id = a.person_id LEFT JOIN ${oauthClients} c ON c.id = a.via
        WHERE a.decision_id = ${decisions.id}), '[]')`,
    })
    .from(decisions)
    .innerJoin(agents, eq(agents.id, decisions.agentId))
    .innerJoin(capabilities, eq(capabilities.id, decisions.capabilityId))
    .leftJoin(people, eq(people.id, decisions.resolvedBy))
    .leftJoin(oauthClients, eq(oauthClients.id, decisions.resolvedVia))
    .$dynamic();
}

interface ApprovalJson {
  person_id: string;
  name: string;
  via: string;
  client_name: string | null;
  at: string;
  note: string | null;
}

function toDecisionRecord({ decision: row, agentName, capabilityKey, capabilityName, resolverName, resolverClientName, approvals }: {
  decision: DecisionRow;
  agentName: string;
  capabilityKey: string;
  capabilityName: string;
  resolverName: string | null;
  resolverClientName: string | null;
  approvals: ApprovalJson[];
}): DecisionRecord {
  // A pending decision past its time is expired even before the expiry job has run.
  const status = row.status === 'pending' && Date.parse(toIso(row.expiresAt)) <= Date.now() ? 'expired' : row.status;
  return {
    id: row.id,
    status,
    action: { capability_id: row.capabilityId, capability_key: capabilityKey, capability_name: capabilityName, input: row.input, space_id: row.spaceId },
    agent: { id: row.agentId, name: agentName },
    risk: row.risk,
    reasons: row.reasons,
    operation_id: row.operationId,
    requested_at: toIso(row.requestedAt),
    expires_at: toIso(row.expiresAt),
    ...(row.resolvedAt && row.status !== 'pending' ? { resolved_at: toIso(row.resolvedAt) } : {}),
    ...(row.resolvedBy && resolverName !== null ? { resolved_by: toResolvedBy(row.resolvedBy, resolverName, row.resolvedVia, resolverClientName) } : {}),
    ...(row.note ? { note: row.note } : {}),
    approvals_required: row.approvalsRequired,
    approvals: approvals.map((approval) => ({
      ...toResolvedBy(approval.person_id, approval.name, approval.via, approval.client_name),
      at: toIso(approval.at),
      ...(approval.note ? { note: approval.note } : {}),
    })),
  };
}

/** How many decisions wait for this person: the inbox's count, shown on every console page. */
export async function countPendingDecisions(db: Queryable, person: { id: string; role: string }): Promise<number> {
  const [row] = await pendingDecisionsCount(db, person);
  return row?.count ?? 0;
}

/**
 * The count's query (exported so a test can EXPLAIN it). Every decision has its agent (a foreign key that cascades),
 * so for an owner or admin, who govern every agent, the join is left out and decisions_pending_idx answers alone:
 * at 30,000 pending decisions that is 3 ms instead of 15.
 */
export function pendingDecisionsCount(db: Queryable, person: { id: string; role: string }) {
  const pending = and(eq(decisions.status, 'pending'), sql`${decisions.expiresAt} > now()`);
  const count = db.select({ count: sql<number>`count(*)::int` }).from(decisions);
  if (governsEveryAgent(person)) return count.where(pending);
  return count.innerJoin(agents, eq(agents.id, decisions.agentId)).where(and(pending, mayGovern(person)));
}

/** What a person weighs before deciding (issue 16 item 9): who asked and through what, the cost, where it goes. */
export interface DecisionContext {
  /** The person the action was asked for (with two or more approvals needed, they cannot approve it). */
  askedBy: { id: string; name: string; email: string } | null;
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
      askerId: people.id,
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
        askedBy: row.askerId !== null && row.askerName !== null && row.askerEmail !== null ? { id: row.askerId, name: row.askerName, email: row.askerEmail } : null,
        client: row.clientId ? { id: row.clientId, name: shownClientName(row.clientName) } : null,
        cost: row.cost,
        budget: row.budget,
        used: row.used,
        destination: describeDestination(row.connector),
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
