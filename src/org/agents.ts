/**
 * Agents (DESIGN 4.1 and 4.5): the built-in `assistant`, agents declared in the organization file, and
 * connected clients — every OAuth client a person authorized becomes an agent of kind `client` with that
 * person responsible and the organization's default client autonomy.
 */
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { Queryable } from '../platform/database.js';
import { newId } from './ids.js';
import { differsFromExcluded, upsertOutcome, type UpsertOutcome } from '../platform/upsert.js';
import { agents, organization } from './schema.js';

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
