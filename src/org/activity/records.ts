/**
 * The organization's activity log (DESIGN 4.6): one append-only record of everything that changed or decided
 * something, with who (person, client, agent), what, when, and in which space.
 *
 * `recordActivity` is called with the transaction of the change it records, so an entry exists exactly when
 * its change committed. It only inserts: the entry is sealed into the hash chain a moment later, in commit
 * order, by chain.ts — the writers never wait on one another for the chain.
 */
import { and, asc, desc, eq, getTableColumns, gt, gte, inArray, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { currentTraceparent } from '../../platform/trace.js';
import { orgActivity } from '../schema.js';

/** What happened, as `<thing>.<event>`. */
export type ActivityKind =
  | 'tool.called'
  | 'operation.started'
  | 'operation.running'
  | 'operation.paused'
  | 'operation.resumed'
  | 'operation.succeeded'
  | 'operation.failed'
  | 'operation.cancelled'
  | 'gate.verdict'
  | 'decision.opened'
  | 'decision.approved_once'
  | 'decision.resolved'
  | 'decision.expired'
  | 'decision.reminded'
  | 'notification.sent'
  | 'notification.failed'
  | 'delivery.attempted'
  | 'connector.called'
  | 'memory.written'
  | 'memory.retracted'
  | 'task.created'
  | 'task.updated'
  | 'task.question'
  | 'task.answered'
  | 'rule.learned'
  | 'rule.revoked'
  | 'rule.created'
  | 'rule.updated'
  | 'rule.deleted'
  | 'rule.enforced'
  | 'person.signed_in'
  | 'person.signed_out'
  | 'person.password_changed'
  | 'person.notifications_changed'
  | 'person.renamed'
  | 'person.invited'
  | 'person.joined'
  | 'person.role_changed'
  | 'person.removed'
  | 'invitation.withdrawn'
  | 'space.created'
  | 'space.renamed'
  | 'space.member_added'
  | 'space.member_removed'
  | 'consent.granted'
  | 'consent.denied'
  | 'client.disconnected'
  | 'org.applied'
  | 'endpoint.created'
  | 'endpoint.updated'
  | 'endpoint.deleted'
  | 'endpoint.delivery_failed'

  | 'agent.created'
  | 'agent.updated'
  | 'capability.created'
  | 'capability.updated'
  | 'organization.settings_changed';

export interface NewActivity {
  kind: ActivityKind;
  summary: string;
  spaceId?: string | null;
  personId?: string | null;
  clientId?: string | null;
  agentId?: string | null;
  capabilityId?: string | null;
  operationId?: string | null;
  subject?: string | null;
  details?: Record<string, unknown>;
  /** Defaults to the trace of the current work (platform/trace.ts). */
  traceparent?: string | null;
}

export type ActivityEntry = typeof orgActivity.$inferSelect;

/** Summaries and details are for people and bounded: a huge argument never bloats the log. */
const MAX_SUMMARY = 300;
const MAX_DETAILS_BYTES = 8_192;

/** Appends entries in `db`, which should be the transaction of the change they record. */
export async function recordActivity(db: Queryable, ...entries: NewActivity[]): Promise<void> {
  if (entries.length === 0) return;
  const at = new Date().toISOString();
  await db.insert(orgActivity).values(entries.map((entry) => activityRow(entry, at)));
}

/**
 * `recordActivity`'s statement, to embed in a larger one (a CTE), so a change and its entries are one round trip
 * and need no transaction. Each part's entries are written only where its `where` holds (a condition on the rest
 * of the statement, `EXISTS (SELECT FROM moved)`); the entries keep their order, part after part.
 */
export function activityStatement(...parts: Array<{ entries: readonly NewActivity[]; where?: SQL }>): SQL {
  const at = new Date().toISOString();
  const fields = Object.keys(activityRow({ kind: 'tool.called', summary: '' }, at)) as Array<keyof ReturnType<typeof activityRow>>;
  const columns = sql.raw(fields.map((field) => `"${activityColumns[field].name}"`).join(', '));
  const selects = parts.map(({ entries, where = sql`true` }) => {
    const values = entries.map((entry) => {
      const row = activityRow(entry, at);
      return Object.fromEntries(fields.map((field) => [activityColumns[field].name, row[field]]));
    });
    // The table's own row type reads the JSON: each value gets its column's type, all in one parameter.
    return sql`SELECT ${columns} FROM jsonb_populate_recordset(NULL::${orgActivity}, ${JSON.stringify(values)}::jsonb) WHERE ${where}`;
  });
  return sql`INSERT INTO ${orgActivity} (${columns}) ${sql.join(selects, sql` UNION ALL `)}`;
}

const activityColumns = getTableColumns(orgActivity);

function activityRow(entry: NewActivity, at: string) {
  return {
    at,
    kind: entry.kind,
    summary: entry.summary.length > MAX_SUMMARY ? `${entry.summary.slice(0, MAX_SUMMARY - 1)}…` : entry.summary,
    spaceId: entry.spaceId ?? null,
    personId: entry.personId ?? null,
    clientId: entry.clientId ?? null,
    agentId: entry.agentId ?? null,
    capabilityId: entry.capabilityId ?? null,
    operationId: entry.operationId ?? null,
    subject: entry.subject ?? null,
    details: boundedDetails(entry.details ?? {}),
    traceparent: entry.traceparent === undefined ? (currentTraceparent() ?? null) : entry.traceparent,
  };
}

function boundedDetails(details: Record<string, unknown>): Record<string, unknown> {
  const text = JSON.stringify(details);
  if (text.length <= MAX_DETAILS_BYTES) return details;
  return { truncated: true, preview: text.slice(0, MAX_DETAILS_BYTES - 200) };
}

/** Which entries a list holds; every field narrows it. */
export interface ActivityFilter {
  kind?: string;
  /** A kind's prefix, `decision` for `decision.*`. */
  kindPrefix?: string;
  spaceId?: string;
  personId?: string;
  clientId?: string;
  agentId?: string;
  capabilityId?: string;
  operationId?: string;
  /** ISO timestamps: `from` inclusive, `to` exclusive. */
  from?: string;
  to?: string;
  /** A W3C trace id (32 hex digits): the entries one trace caused. */
  traceId?: string;
}

/**
 * Whose entries a person may read: everything for owners and admins; for anyone else the entries of their
 * spaces and those done by them or on their behalf.
 */
export type ActivityScope = { all: true } | { all: false; personId: string; spaceIds: readonly string[] };

export function activityScopeCondition(scope: ActivityScope): SQL | undefined {
  if (scope.all) return undefined;
  const own = eq(orgActivity.personId, scope.personId);
  return scope.spaceIds.length > 0 ? or(own, inArray(orgActivity.spaceId, [...scope.spaceIds])) : own;
}

function filterCondition(filter: ActivityFilter): SQL[] {
  const conditions: SQL[] = [];
  if (filter.kind) conditions.push(eq(orgActivity.kind, filter.kind));
  if (filter.kindPrefix) conditions.push(sql`${orgActivity.kind} LIKE ${`${filter.kindPrefix.replace(/[\\%_]/g, '\\$&')}.%`}`);
  if (filter.spaceId) conditions.push(eq(orgActivity.spaceId, filter.spaceId));
  if (filter.personId) conditions.push(eq(orgActivity.personId, filter.personId));
  if (filter.clientId) conditions.push(eq(orgActivity.clientId, filter.clientId));
  if (filter.agentId) conditions.push(eq(orgActivity.agentId, filter.agentId));
  if (filter.capabilityId) conditions.push(eq(orgActivity.capabilityId, filter.capabilityId));
  if (filter.operationId) conditions.push(eq(orgActivity.operationId, filter.operationId));
  if (filter.from) conditions.push(gte(orgActivity.at, filter.from));
  if (filter.to) conditions.push(lt(orgActivity.at, filter.to));
  if (filter.traceId) conditions.push(sql`substr(${orgActivity.traceparent}, 4, 32) = ${filter.traceId}`);
  return conditions;
}

export interface ActivityPage {
  rows: ActivityEntry[];
  /** The `before` (newest first) or `after` (oldest first) of the next page, when one follows. */
  next: number | null;
}

/**
 * Keyset-paged by the entry's sequence number: newest first past `before` (the last seq of the previous page),
 * or oldest first past `after` (for an export, which reads the log in the order it was written).
 */
export async function listActivity(
  db: Queryable,
  scope: ActivityScope,
  filter: ActivityFilter,
  page: { limit: number; before?: number; after?: number },
): Promise<ActivityPage> {
  const conditions = [...filterCondition(filter)];
  const scoped = activityScopeCondition(scope);
  if (scoped) conditions.push(scoped);
  if (page.before !== undefined) conditions.push(lt(orgActivity.seq, page.before));
  if (page.after !== undefined) conditions.push(gt(orgActivity.seq, page.after));
  const oldestFirst = page.after !== undefined;
  const rows = await db
    .select()
    .from(orgActivity)
    .where(conditions.length ? and(...conditions) : undefined)
    .orderBy(oldestFirst ? asc(orgActivity.seq) : desc(orgActivity.seq))
    .limit(page.limit + 1);
  const shown = rows.slice(0, page.limit);
  return { rows: shown, next: rows.length > page.limit ? shown[shown.length - 1].seq : null };
}
