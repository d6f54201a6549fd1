/**
 * What an event webhook carries (DESIGN 4.8; README "Events"): the Standard Webhooks payload shape
 * `{type, timestamp, data}`, `data` read from the records when the event is handed to the endpoints — enough for a
 * chat bridge to say what happened and link to where a person acts, without calling back. Each body is built once
 * per event and stored with its deliveries, so every endpoint and every attempt gets the same bytes.
 */
import { alias } from 'drizzle-orm/pg-core';
import { eq, sql } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { toIso } from '../../platform/time.js';
import { agentMonthlyUsage, agents, capabilities, decisions, operations, people, spaces, tasks, taskQuestions } from '../schema.js';
import type { OrgEvent } from './announce.js';
import { decisionPageUrl } from '../decisions/page-url.js';

/** The most of a decision's input a body quotes (JSON characters); past it a shortened preview is sent. */
const MAX_INPUT_CHARS = 4096;

export interface EventBody {
  type: OrgEvent['type'];
  /** When the event happened (ISO 8601). */
  timestamp: string;
  data: Record<string, unknown>;
}

/** The body of `event`, or undefined when what it names is gone (deleted since): nothing is sent then. */
export async function eventBody(db: Queryable, event: OrgEvent, origin: string): Promise<EventBody | undefined> {
  const data = await eventData(db, event, origin);
  return data && { type: event.type, timestamp: event.at, data };
}

function eventData(db: Queryable, event: OrgEvent, origin: string): Promise<Record<string, unknown> | undefined> {
  switch (event.type) {
    case 'decision.pending':
    case 'decision.reminder':
      return decisionData(db, event.data.decision_id, origin, { resolved: false });
    case 'decision.resolved':
      return decisionData(db, event.data.decision_id, origin, { resolved: true });
    case 'operation.failed':
      return operationData(db, event.data.operation_id, origin);
    case 'task.question':
      return questionData(db, event.data.task_id, event.data.question_id, origin);
    case 'budget.threshold':
      return budgetData(db, event.data.agent_id, event.data.month);
  }
}

const requester = alias(people, 'requester');
const resolver = alias(people, 'resolver');

async function decisionData(db: Queryable, id: string, origin: string, { resolved }: { resolved: boolean }) {
  const [row] = await db
    .select({
      decision: decisions,
      capability: { key: capabilities.key, name: capabilities.name },
      agent: { key: agents.key, name: agents.name },
      space: { id: spaces.id, name: spaces.name },
      requestedFor: { name: requester.name, email: requester.email },
      resolvedBy: { name: resolver.name, email: resolver.email },
    })
    .from(decisions)
    .innerJoin(capabilities, eq(capabilities.id, decisions.capabilityId))
    .innerJoin(agents, eq(agents.id, decisions.agentId))
    .leftJoin(operations, eq(operations.id, decisions.operationId))
    .leftJoin(requester, eq(requester.id, operations.personId))
    .leftJoin(resolver, eq(resolver.id, decisions.resolvedBy))
    .leftJoin(spaces, eq(spaces.id, decisions.spaceId))
    .where(eq(decisions.id, id));
  if (!row) return undefined;
  const { decision } = row;
  return {
    decision_id: decision.id,
    status: decision.status,
    capability: row.capability,
    agent: row.agent,
    risk: decision.risk,
    reasons: decision.reasons,
    ...boundedInput(decision.input),
    space: row.space,
    requested_for: row.requestedFor,
    expires_at: toIso(decision.expiresAt),
    url: decisionPageUrl(origin, decision.id),
    ...(resolved && {
      outcome: decision.status,
      resolved_by: row.resolvedBy,
      // `inbox`, or `client` for a person resolving through an MCP client (resolved_via holds its id).
      via: decision.resolvedVia === null ? null : decision.resolvedVia === 'inbox' ? 'inbox' : 'client',
    }),
  };
}

/** The input as given when its JSON is short enough; else the start of that JSON, marked shortened. */
function boundedInput(input: unknown): { input: unknown; input_truncated: boolean } {
  const text = JSON.stringify(input) ?? 'null';
  if (text.length <= MAX_INPUT_CHARS) return { input, input_truncated: false };
  return { input: `${text.slice(0, MAX_INPUT_CHARS)}…`, input_truncated: true };
}

async function operationData(db: Queryable, id: string, origin: string) {
  const [row] = await db
    // Flat: drizzle would read a left-joined {key, name} with a null key (a client's agent) as no agent at all.
    .select({ operation: operations, agentKey: agents.key, agentName: agents.name, space: { id: spaces.id, name: spaces.name } })
    .from(operations)
    // A connected client's work names no agent: the client's own agent (DESIGN 4.1) is the one that acted.
    .leftJoin(
      agents,
      sql`${agents.id} = ${operations.agentId} OR (${operations.agentId} IS NULL AND ${agents.kind} = 'client'
        AND ${agents.clientId} = ${operations.clientId} AND ${agents.responsiblePersonId} = ${operations.personId})`,
    )
    .leftJoin(spaces, eq(spaces.id, operations.spaceId))
    .where(eq(operations.id, id));
  if (!row) return undefined;
  return {
    operation_id: row.operation.id,
    kind: row.operation.kind,
    error: row.operation.error ? { code: row.operation.error.code, message: row.operation.error.message } : null,
    agent: row.agentName === null ? null : { key: row.agentKey, name: row.agentName },
    space: row.space,
    url: `${origin}/operations/${row.operation.id}`,
  };
}

async function questionData(db: Queryable, taskId: string, questionId: string, origin: string) {
  const [row] = await db
    .select({ task: { id: tasks.id, title: tasks.title }, question: { id: taskQuestions.id, text: taskQuestions.text }, space: { id: spaces.id, name: spaces.name } })
    .from(taskQuestions)
    .innerJoin(tasks, eq(tasks.id, taskQuestions.taskId))
    .innerJoin(spaces, eq(spaces.id, tasks.spaceId))
    .where(sql`${taskQuestions.id} = ${questionId} AND ${tasks.id} = ${taskId}`);
  return row && { ...row, url: `${origin}/inbox` };
}

async function budgetData(db: Queryable, agentId: string, month: string) {
  const [row] = await db
    .select({ key: agents.key, name: agents.name, budget: agents.budget, used: sql<number>`coalesce(${agentMonthlyUsage.used}, 0)`.mapWith(Number) })
    .from(agents)
    .leftJoin(agentMonthlyUsage, sql`${agentMonthlyUsage.agentId} = ${agents.id} AND ${agentMonthlyUsage.month} = ${month}`)
    .where(eq(agents.id, agentId));
  if (!row) return undefined;
  const percent = row.budget ? Math.floor((row.used * 100) / row.budget) : null;
  return { agent: { key: row.key, name: row.name }, month, used: row.used, budget: row.budget, percent };
}
