/**
 * Agents (DESIGN 4.1 and 4.5): the built-in `assistant`, agents declared in the organization file, and
 * connected clients — every OAuth client a person authorized becomes an agent of kind `client` with that
 * person responsible and the organization's default client autonomy.
 */
import { and, asc, eq, inArray, ne, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { SecretResolver } from '../../config.js';
import { hotStatement, type Queryable } from '../../platform/database.js';
import { usageOfAgents, usageRecord } from './usage.js';
import { orgErrors } from '../errors.js';
import { newId } from '../ids.js';
import { differsFromExcluded, upsertOutcome, type UpsertOutcome } from '../../platform/upsert.js';
import { agents, organization } from '../schema.js';

export const ASSISTANT_KEY = 'assistant';

export interface AgentSummary {
  id: string;
  key: string | null;
  kind: 'builtin' | 'declared' | 'client';
  name: string;
  description: string;
  autonomy: number;
  status: 'active' | 'disabled';
}

const summaryColumns = {
  id: agents.id,
  key: agents.key,
  kind: agents.kind,
  name: agents.name,
  description: agents.description,
  autonomy: agents.autonomy,
  status: agents.status,
};

/** The built-in assistant exists in every organization; creating it twice is a no-op. */
export async function ensureAssistant(db: Queryable): Promise<void> {
  await db
    .insert(agents)
    .values({
      id: newId('agt'),
      key: ASSISTANT_KEY,
      kind: 'builtin',
      name: 'Assistant',
      description: "Answers questions from the organization's memory and tasks, with citations",
      autonomy: 1,
    })
    .onConflictDoNothing({ target: agents.key });
}

export interface DeclaredAgentInput {
  key: string;
  name: string;
  description: string;
  autonomy: number;
  responsiblePersonId: string | null;
  budget: number | null;
  delivery: Record<string, unknown> | null;
}

export async function upsertDeclaredAgent(db: Queryable, input: DeclaredAgentInput): Promise<{ outcome: UpsertOutcome }> {
  const values = { ...input, kind: 'declared' as const };
  const compared = (Object.keys(values) as Array<keyof typeof values>).map((key) => agents[key]);
  const [row] = await db
    .insert(agents)
    .values({ id: newId('agt'), ...values })
    .onConflictDoUpdate({ target: agents.key, set: { ...values, updatedAt: sql`now()` }, setWhere: differsFromExcluded(agents, compared) })
    .returning({ created: sql<boolean>`(xmax = 0)` });
  return { outcome: upsertOutcome(row) };
}

/**
 * Records the client a person just authorized as an agent responsible to them (DESIGN 4.1); a second
 * approval of the same client by the same person refreshes its name and keeps its settings.
 */
export async function recordClientAgent(db: Queryable, input: { clientId: string; clientName: string; personId: string }): Promise<string> {
  const [existing] = await db
    .select({ id: agents.id })
    .from(agents)
    .where(and(eq(agents.kind, 'client'), eq(agents.clientId, input.clientId), eq(agents.responsiblePersonId, input.personId)));
  if (existing) {
    await db.update(agents).set({ name: input.clientName, updatedAt: sql`now()` }).where(eq(agents.id, existing.id));
    return existing.id;
  }
  const [org] = await db.select({ clientAutonomy: organization.clientAutonomy }).from(organization).limit(1);
  const id = newId('agt');
  await db
    .insert(agents)
    .values({
      id,
      kind: 'client',
      name: input.clientName,
      description: 'A connected application acting for its responsible person',
      autonomy: org?.clientAutonomy ?? 1,
      responsiblePersonId: input.personId,
      clientId: input.clientId,
    })
    .onConflictDoNothing();
  return id;
}

/**
 * The agents a person can reach from a client: the assistant and the organization's declared agents.
 * Connected clients are callers, not agents to be messaged, so they are not listed.
 */
export async function listReachableAgents(db: Queryable): Promise<AgentSummary[]> {
  return db
    .select(summaryColumns)
    .from(agents)
    .where(and(ne(agents.kind, 'client'), eq(agents.status, 'active')))
    .orderBy(sql`${agents.kind} = 'builtin' DESC`, asc(agents.name));
}

export type AgentRow = typeof agents.$inferSelect;

/** What service_context shows of each agent a person can reach. */
export const agentSummaryRecord = z.object({
  id: z.string(),
  key: z.string().nullable(),
  name: z.string(),
  description: z.string(),
  kind: z.enum(['builtin', 'declared', 'client']),
  autonomy: z.number(),
});

/** An agent as list_agents shows it (DESIGN 4.3), with its month's usage against its budget. */
export const agentRecord = agentSummaryRecord.extend({
  status: z.enum(['active', 'disabled']),
  /** Whether message_agent can reach it: an active agent with a webhook delivery. */
  messageable: z.boolean(),
  usage: usageRecord,
});
export type AgentRecord = z.infer<typeof agentRecord>;

/**
 * The organization's agents as a person sees them: the assistant, every declared agent (disabled ones too,
 * with their status), and the person's own connected clients — not other people's.
 */
export async function listAgents(db: Queryable, personId: string): Promise<AgentRecord[]> {
  const rows = await db
    .select()
    .from(agents)
    .where(or(ne(agents.kind, 'client'), eq(agents.responsiblePersonId, personId)))
    .orderBy(sql`${agents.kind} = 'builtin' DESC`, sql`${agents.kind} = 'client'`, asc(agents.name), asc(agents.id));
  const usage = await usageOfAgents(db, rows.map((row) => row.id));
  return rows.map((row) => ({
    id: row.id,
    key: row.key,
    name: row.name,
    description: row.description,
    kind: row.kind,
    autonomy: row.autonomy,
    status: row.status,
    messageable: row.status === 'active' && webhookDelivery.safeParse(row.delivery).success,
    usage: usage.get(row.id)!,
  }));
}

/** The names connected clients go by (their agents'), by client id: provenance names the client it came through. */
export async function namesOfClients(db: Queryable, clientIds: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(clientIds)];
  if (unique.length === 0) return new Map();
  const rows = await db
    .select({ clientId: agents.clientId, name: agents.name })
    .from(agents)
    .where(and(eq(agents.kind, 'client'), inArray(agents.clientId, unique)));
  return new Map(rows.map((row) => [row.clientId!, row.name]));
}

export async function findAgent(db: Queryable, id: string): Promise<AgentRow | undefined> {
  const [row] = await selectAgent(db, { id });
  return row;
}

/** Read on every message_agent call and every delivery attempt. */
const selectAgent = hotStatement('find_agent', (db) => db.select().from(agents).where(eq(agents.id, sql.placeholder('id'))));

/** DESIGN 4.2: `delivery: { kind: webhook, url, secret_env }`, as the organization file stored it. */
const webhookDelivery = z.object({ kind: z.literal('webhook'), url: z.string().url(), secret_env: z.string().optional() });

export interface WebhookTarget {
  url: string;
  /** The Standard Webhooks signing secret, `whsec_…`. */
  secret: string;
}

/**
 * Where and with which secret work for `agent` is delivered (DESIGN 4.5), or the catalogued refusal saying
 * why it cannot receive work: disabled, the built-in assistant (asked with `ask`), a connected client, no
 * webhook, or no signing secret. The secret is the one `secret_env` names when the delivery names one (the
 * file's way), else the one the server generated when the agent was made or edited on the console.
 */
export function webhookTarget(agent: AgentRow, resolveSecret: SecretResolver | undefined): WebhookTarget {
  if (agent.status === 'disabled') throw orgErrors.agentDisabled(agent.name);
  if (agent.kind === 'builtin') {
    throw orgErrors.agentUnreachable(`the ${agent.name} is not messaged: put your question to it with the ask tool`, { use_tool: 'ask' });
  }
  if (agent.kind === 'client') {
    throw orgErrors.agentUnreachable(`${agent.name} is a connected application: it calls the organization's tools itself and receives no messages`);
  }
  const delivery = webhookDelivery.safeParse(agent.delivery);
  if (!delivery.success) throw orgErrors.agentUnreachable(`the agent ${agent.name} has no delivery, so it cannot receive work`);
  const name = delivery.data.secret_env;
  const secret = name ? resolveSecret?.(name) : (agent.signingSecret ?? undefined);
  if (!secret || !secret.startsWith('whsec_')) {
    throw orgErrors.agentUnreachable(
      `the agent ${agent.name} cannot be reached: its signing secret${name ? ` (${name})` : ''} is not set to a whsec_ value on the server`,
    );
  }
  return { url: delivery.data.url, secret };
}
