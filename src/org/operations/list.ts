/**
 * Operations as the console lists them (DESIGN 4.6): newest first, filtered by status, kind, agent, capability
 * and space, within the reader's scope, keyset-paged by (created_at, id) so a page never skips or repeats a
 * row however many are written meanwhile.
 */
import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { toIso } from '../../platform/time.js';
import type { ReadScope } from '../read-scope.js';
import { aboutOperation, capabilityIdOf, operationsScopeCondition } from './overview.js';
import { shownClientName } from '../../auth/clients.js';
import { oauthClients } from '../../auth/schema.js';
import { agents, capabilities, operations, people, spaces } from '../schema.js';
import type { OperationKind, OperationStatus } from './states.js';

export interface OperationFilter {
  status?: OperationStatus;
  kind?: OperationKind;
  agentId?: string;
  capabilityId?: string;
  spaceId?: string;
}

/** Where a page ends: the last row's creation time (ISO, µs) and id. */
export interface OperationCursor {
  createdAt: string;
  id: string;
}

export interface OperationListRow {
  id: string;
  kind: OperationKind;
  /** What it is about (overview.ts `aboutOperation`): its capability's name or its task's title. */
  about: string | null;
  status: OperationStatus;
  agent: { id: string; name: string } | null;
  /** For capability operations. */
  capability: { id: string; key: string } | null;
  space: { id: string; name: string } | null;
  person: { id: string; name: string };
  createdAt: string;
  finishedAt: string | null;
}

/**
 * A page of operations. Its ids are chosen first, joined with names after, so only the page's rows are joined.
 * For a reader who does not see everything the page is the newest of one index-ordered branch per space of
 * theirs and one of their own operations, merged: each branch reads at most a page from its index however the
 * organization's other spaces grow (an OR over spaces and person would read every row the reader may see).
 */
export async function listOperations(
  db: Queryable,
  scope: ReadScope,
  filter: OperationFilter,
  page: { limit: number; before?: OperationCursor },
): Promise<{ rows: OperationListRow[]; next: OperationCursor | null }> {
  const conditions: SQL[] = [];
  if (filter.status) conditions.push(eq(operations.status, filter.status));
  if (filter.kind) conditions.push(eq(operations.kind, filter.kind));
  if (filter.agentId) conditions.push(eq(operations.agentId, filter.agentId));
  if (filter.spaceId) conditions.push(eq(operations.spaceId, filter.spaceId));
  if (filter.capabilityId) conditions.push(eq(operations.kind, 'capability'), sql`${capabilityIdOf} = ${filter.capabilityId}`);
  if (page.before) {
    // (created_at, id) < cursor, written so that an index on created_at alone bounds the scan.
    const at = sql`${page.before.createdAt}::timestamptz`;
    conditions.push(sql`${operations.createdAt} <= ${at} AND (${operations.createdAt} < ${at} OR ${operations.id} < ${page.before.id})`);
  }
  const take = page.limit + 1;
  const branch = (scoped?: SQL) =>
    sql`(SELECT ${operations.id}, ${operations.createdAt} FROM ${operations} WHERE ${and(sql`true`, scoped, ...conditions)}
      ORDER BY ${operations.createdAt} DESC, ${operations.id} DESC LIMIT ${take})`;
  const branches = scope.all
    ? [branch()]
    : [branch(eq(operations.personId, scope.personId)), ...scope.spaceIds.map((spaceId) => branch(eq(operations.spaceId, spaceId)))];
  const pageIds = sql`SELECT id FROM (${sql.join(branches, sql` UNION `)}) AS branches ORDER BY created_at DESC, id DESC LIMIT ${take}`;
  const rows = await db
    .select({
      id: operations.id,
      kind: operations.kind,
      about: aboutOperation,
      status: operations.status,
      agentId: operations.agentId,
      agentName: agents.name,
      capabilityId: capabilities.id,
      capabilityKey: capabilities.key,
      spaceId: operations.spaceId,
      spaceName: spaces.name,
      personId: operations.personId,
      personName: people.name,
      createdAt: operations.createdAt,
      finishedAt: operations.finishedAt,
    })
    .from(operations)
    .innerJoin(people, eq(people.id, operations.personId))
    .leftJoin(agents, eq(agents.id, operations.agentId))
    .leftJoin(spaces, eq(spaces.id, operations.spaceId))
    .leftJoin(capabilities, and(eq(operations.kind, 'capability'), eq(capabilities.id, capabilityIdOf)))
    .where(sql`${operations.id} IN (${pageIds})`)
    .orderBy(desc(operations.createdAt), desc(operations.id));
  const shown = rows.slice(0, page.limit).map(
    (row): OperationListRow => ({
      id: row.id,
      kind: row.kind,
      about: row.about,
      status: row.status,
      agent: row.agentId && row.agentName !== null ? { id: row.agentId, name: row.agentName } : null,
      capability: row.capabilityId && row.capabilityKey !== null ? { id: row.capabilityId, key: row.capabilityKey } : null,
      space: row.spaceId && row.spaceName !== null ? { id: row.spaceId, name: row.spaceName } : null,
      person: { id: row.personId, name: row.personName },
      createdAt: toIso(row.createdAt),
      finishedAt: toIso(row.finishedAt),
    }),
  );
  const last = shown.at(-1);
  return { rows: shown, next: rows.length > page.limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/** One operation, when it is the reader's to see; undefined otherwise (an unknown id and another space's look the same). */
export async function findOperationInScope(db: Queryable, scope: ReadScope, id: string) {
  const [row] = await db
    .select({
      operation: operations,
      agentName: agents.name,
      spaceName: spaces.name,
      personName: people.name,
      capabilityKey: capabilities.key,
      about: aboutOperation,
      clientName: oauthClients.name,
    })
    .from(operations)
    .innerJoin(people, eq(people.id, operations.personId))
    .leftJoin(oauthClients, eq(oauthClients.id, operations.clientId))
    .leftJoin(agents, eq(agents.id, operations.agentId))
    .leftJoin(spaces, eq(spaces.id, operations.spaceId))
    .leftJoin(capabilities, and(eq(operations.kind, 'capability'), eq(capabilities.id, capabilityIdOf)))
    .where(and(eq(operations.id, id), operationsScopeCondition(scope)));
  return row && { ...row, clientName: shownClientName(row.clientName) };
}
