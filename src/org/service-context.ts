/**
 * What a connected client learns first (spec 4.2 rule 2, DESIGN 4.3): who it acts for, in which
 * organization, which agents it can reach, the spaces work can be placed in, the scopes actually granted,
 * and the server's time (UTC). Deliberately no timezone (spec 4.2 rule 3). All but the scopes (the token's) and
 * the time is read from the directory, kept in memory until it changes (read-cache.ts).
 */
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '../platform/database.js';
import { agentSummaryRecord, listReachableAgents } from './agents/records.js';
import { getPerson } from './people/records.js';
import type { OrgContext } from './context.js';
import { cachedOrgRead } from './read-cache.js';
import { agents, organization } from './schema.js';
import { listSpacesOfPerson } from './spaces/records.js';

/** service_context's result (DESIGN 4.3): its MCP `outputSchema`. */
export const serviceContextRecord = z.object({
  person: z.object({ id: z.string(), name: z.string(), email: z.string(), role: z.enum(['owner', 'admin', 'member']) }),
  organization: z.object({ id: z.string(), name: z.string() }).nullable(),
  client: z.object({ client_id: z.string(), agent_id: z.string().nullable(), name: z.string().nullable(), autonomy: z.number().nullable() }),
  agents: z.array(agentSummaryRecord),
  spaces: z.array(z.object({ id: z.string(), key: z.string(), name: z.string() })),
  scopes: z.array(z.string()),
  server_time: z.string(),
});
export type ServiceContext = z.infer<typeof serviceContextRecord>;

export interface Caller {
  personId: string;
  clientId: string;
  scopes: string[];
}

/**
 * service_context's answer. Every tool session calls it first and many call it often, so what it reads from the
 * directory is kept in memory until the directory changes on any process (read-cache.ts); the scopes are the
 * caller's own and the time is now.
 */
export async function describeServiceContext(ctx: Pick<OrgContext, 'db' | 'database' | 'reads'>, caller: Caller): Promise<ServiceContext> {
  const { personId, clientId } = caller;
  const known = await cachedOrgRead(ctx, ctx.db, 'directory', 'serviceContext', { personId, clientId }, () => readDirectoryOf(ctx.db, caller));
  return { ...known, scopes: caller.scopes, server_time: new Date().toISOString() };
}

async function readDirectoryOf(db: Queryable, caller: Omit<Caller, 'scopes'>): Promise<Omit<ServiceContext, 'scopes' | 'server_time'>> {
  const [person, [org], reachable, spaces, [client]] = await Promise.all([
    getPerson(db, caller.personId),
    db.select({ id: organization.id, name: organization.name }).from(organization).limit(1),
    listReachableAgents(db),
    listSpacesOfPerson(db, caller.personId),
    db
      .select({ agentId: agents.id, name: agents.name, autonomy: agents.autonomy })
      .from(agents)
      .where(and(eq(agents.kind, 'client'), eq(agents.clientId, caller.clientId), eq(agents.responsiblePersonId, caller.personId))),
  ]);
  if (!person) throw new Error(`token subject ${caller.personId} is not a person`);
  return {
    person: { id: person.id, name: person.name, email: person.email, role: person.role },
    organization: org ? { id: org.id, name: org.name } : null,
    client: { client_id: caller.clientId, agent_id: client?.agentId ?? null, name: client?.name ?? null, autonomy: client?.autonomy ?? null },
    agents: reachable.map((agent) => ({
      id: agent.id,
      key: agent.key,
      name: agent.name,
      description: agent.description,
      kind: agent.kind,
      autonomy: agent.autonomy,
    })),
    spaces: spaces.map((space) => ({ id: space.id, key: space.key, name: space.name })),
  };
}
