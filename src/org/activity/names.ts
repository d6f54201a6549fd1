/**
 * The names the activity pages show beside ids, and the choices of their filters: the people, spaces, agents and
 * capabilities a viewer may filter by. People and spaces follow the viewer's scope; capabilities are the
 * organization's and everyone sees their names; agents too, but for other people's connected clients, which are
 * named only where an entry the viewer sees names them (as on the agents pages, agents/overview.ts).
 */
import { asc, eq, inArray, sql } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { visibleAgents } from '../agents/overview.js';
import { agents, capabilities, people, spaceMembers, spaces } from '../schema.js';
import type { ActivityScope } from './records.js';

export interface Named {
  id: string;
  name: string;
}

export interface ActivityNames {
  people: Named[];
  spaces: Named[];
  /** Every agent, to name one an entry mentions. */
  agents: Named[];
  /** The agents the viewer may filter by: every agent but other people's connected clients. */
  agentChoices: Named[];
  capabilities: Named[];
  /** Connected clients by client id, named as they named themselves; each is also an agent (kind `client`). */
  clients: Map<string, { name: string; agentId: string }>;
}

export async function activityNames(db: Queryable, scope: ActivityScope): Promise<ActivityNames> {
  const visiblePeople = scope.all
    ? db.select({ id: people.id, name: people.name }).from(people).orderBy(asc(people.name))
    : db
        .selectDistinct({ id: people.id, name: people.name })
        .from(people)
        .innerJoin(spaceMembers, eq(spaceMembers.personId, people.id))
        .where(scope.spaceIds.length ? inArray(spaceMembers.spaceId, [...scope.spaceIds]) : eq(people.id, scope.personId))
        .orderBy(asc(people.name));
  const visibleSpaces = db
    .select({ id: spaces.id, name: spaces.name })
    .from(spaces)
    .where(scope.all ? undefined : inArray(spaces.id, scope.spaceIds.length ? [...scope.spaceIds] : ['']))
    .orderBy(asc(spaces.name));
  const [peopleRows, spaceRows, agentRows, capabilityRows] = await Promise.all([
    visiblePeople,
    visibleSpaces,
    db
      .select({
        id: agents.id,
        name: agents.name,
        clientId: agents.clientId,
        choosable: (scope.all ? sql<boolean>`true` : sql<boolean>`${visibleAgents(scope)}`).as('choosable'),
      })
      .from(agents)
      .orderBy(asc(agents.name)),
    db.select({ id: capabilities.id, name: capabilities.name }).from(capabilities).orderBy(asc(capabilities.name)),
  ]);
  const self = scope.all ? [] : await db.select({ id: people.id, name: people.name }).from(people).where(eq(people.id, scope.personId));
  const merged = new Map([...self, ...peopleRows].map((row) => [row.id, row]));
  const clients = new Map(agentRows.flatMap((row) => (row.clientId ? [[row.clientId, { name: row.name, agentId: row.id }] as const] : [])));
  return {
    people: [...merged.values()],
    spaces: spaceRows,
    agents: agentRows.map(({ id, name }) => ({ id, name })),
    agentChoices: agentRows.filter((row) => row.choosable).map(({ id, name }) => ({ id, name })),
    capabilities: capabilityRows,
    clients,
  };
}
