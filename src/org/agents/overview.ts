/**
 * Agents as the console shows them (DESIGN 4.6): autonomy, the responsible person, the monthly budget and what
 * this month used of it, and the status. Owners and admins see every agent; anyone else the assistant, the
 * declared agents and their own connected clients — other people's clients are theirs (as in list_agents).
 */
import { and, asc, eq, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import type { ReadScope } from '../read-scope.js';
import { agents, people } from '../schema.js';
import { usageOfAgents, type UsageRecord } from './usage.js';

export interface AgentOverview {
  id: string;
  key: string | null;
  kind: 'builtin' | 'declared' | 'client';
  name: string;
  description: string;
  autonomy: number;
  status: 'active' | 'disabled';
  /** `file`: declared in the organization file, changed only there. */
  managedBy: 'file' | 'console';
  responsible: { id: string; name: string } | null;
  /** Where work is delivered: a webhook's host only (never its path's secrets or the signing secret). */
  deliveryHost: string | null;
  usage: UsageRecord;
}

/** The agents a reader may see: all, or every agent but other people's connected clients. */
export function visibleAgents(scope: ReadScope): SQL | undefined {
  return scope.all ? undefined : or(ne(agents.kind, 'client'), eq(agents.responsiblePersonId, scope.personId));
}

/** The host a webhook delivery goes to, or null when the agent has none. */
function deliveryHostOf(delivery: Record<string, unknown> | null): string | null {
  if (!delivery || delivery.kind !== 'webhook' || typeof delivery.url !== 'string') return null;
  try {
    return new URL(delivery.url).host;
  } catch {
    return null;
  }
}

/** The list's order: the assistant, declared agents, then connected clients; by name within each. */
const kindRank = sql<number>`(CASE ${agents.kind} WHEN 'builtin' THEN 0 WHEN 'declared' THEN 1 ELSE 2 END)`;

/** Where a page of agents ends: the last row's place in the order. */
export interface AgentCursor {
  rank: number;
  name: string;
  id: string;
}

async function overviews(db: Queryable, where: SQL | undefined, limit: number): Promise<(AgentOverview & { rank: number })[]> {
  const rows = await db
    .select({ agent: agents, responsibleName: people.name, rank: kindRank })
    .from(agents)
    .leftJoin(people, eq(people.id, agents.responsiblePersonId))
    .where(where)
    .orderBy(kindRank, asc(agents.name), asc(agents.id))
    .limit(limit);
  const usage = await usageOfAgents(db, rows.map((row) => row.agent.id));
  return rows.map(({ agent, responsibleName, rank }) => ({
    rank: Number(rank),
    id: agent.id,
    key: agent.key,
    kind: agent.kind,
    name: agent.name,
    description: agent.description,
    autonomy: agent.autonomy,
    status: agent.status,
    managedBy: agent.managedBy,
    responsible: agent.responsiblePersonId && responsibleName !== null ? { id: agent.responsiblePersonId, name: responsibleName } : null,
    deliveryHost: deliveryHostOf(agent.delivery),
    usage: usage.get(agent.id)!,
  }));
}

/** The agents the reader may see, the assistant first, connected clients last; keyset-paged. */
export async function listAgentOverviews(
  db: Queryable,
  scope: ReadScope,
  page: { limit: number; after?: AgentCursor },
): Promise<{ rows: AgentOverview[]; next: AgentCursor | null }> {
  const after = page.after ? sql`(${kindRank}, ${agents.name}, ${agents.id}) > (${page.after.rank}, ${page.after.name}, ${page.after.id})` : undefined;
  const rows = await overviews(db, and(visibleAgents(scope), after), page.limit + 1);
  const shown = rows.slice(0, page.limit);
  const last = shown.at(-1);
  return {
    rows: shown.map(({ rank: _rank, ...agent }) => agent),
    next: rows.length > page.limit && last ? { rank: last.rank, name: last.name, id: last.id } : null,
  };
}

/** One agent, when the reader may see it. */
export async function findAgentOverview(db: Queryable, scope: ReadScope, id: string): Promise<AgentOverview | undefined> {
  const [found] = await overviews(db, and(eq(agents.id, id), visibleAgents(scope)), 1);
  if (!found) return undefined;
  const { rank: _rank, ...agent } = found;
  return agent;
}
