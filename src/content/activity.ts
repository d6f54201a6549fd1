/**
 * The activity log (DESIGN section 3): every write records who did what to which resource, with the
 * changed fields as `[before, after]`. Entries are written in the write's own transaction, so a write
 * and its entry land or fail together.
 */
import { and, asc, desc, eq, gt, lt, type SQL } from 'drizzle-orm';
import type { Queryable } from '../platform/database.js';
import { orderedNow, toIso } from '../platform/time.js';
import type { Actor } from './actor.js';
import { activity, type ACTIVITY_ACTIONS, type ACTIVITY_RESOURCES } from './schema.js';

export type ActivityResource = (typeof ACTIVITY_RESOURCES)[number];
export type ActivityAction = (typeof ACTIVITY_ACTIONS)[number];
export type Changes = Record<string, [unknown, unknown]>;

export interface ActivityInput {
  resource: ActivityResource;
  resourceId: string;
  action: ActivityAction;
  summary: string;
  changes?: Changes;
}

export async function recordActivity(db: Queryable, actor: Actor, entry: ActivityInput): Promise<void> {
  await db.insert(activity).values({
    resource: entry.resource,
    resourceId: entry.resourceId,
    action: entry.action,
    actorId: actor.actor_id,
    actorType: actor.actor_type,
    summary: entry.summary,
    changes: entry.changes ?? {},
    createdAt: orderedNow() as unknown as string,
  });
}

/** The fields whose values differ between two versions of a record, as `{ field: [before, after] }`. */
export function diffChanges<T extends Record<string, unknown>>(before: T, after: T, fields: ReadonlyArray<keyof T & string>): Changes {
  const changes: Changes = {};
  for (const field of fields) {
    if (JSON.stringify(before[field]) !== JSON.stringify(after[field])) changes[field] = [before[field], after[field]];
  }
  return changes;
}

export interface ActivityEntry {
  id: string;
  resource: string;
  resource_id: string;
  action: string;
  actor_id: string;
  actor_type: string;
  summary: string;
  changes: Changes;
  created_at: string;
}

export interface ActivityQuery {
  resource?: ActivityResource;
  resource_id?: string;
  actor_type?: Actor['actor_type'];
  action?: ActivityAction;
  /** Only entries strictly after / before these ISO times. */
  after?: string;
  before?: string;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
  limit: number;
  /** REST reads the log oldest first; the MCP tool shows the newest first (DESIGN section 3). */
  order: 'oldest_first' | 'newest_first';
}

export async function listActivity(db: Queryable, query: ActivityQuery): Promise<{ entries: ActivityEntry[]; next_cursor: string | null }> {
  const newestFirst = query.order === 'newest_first';
  const conditions: Array<SQL | undefined> = [
    query.resource ? eq(activity.resource, query.resource) : undefined,
    query.resource_id ? eq(activity.resourceId, query.resource_id) : undefined,
    query.actor_type ? eq(activity.actorType, query.actor_type) : undefined,
    query.action ? eq(activity.action, query.action) : undefined,
    query.after ? gt(activity.createdAt, query.after) : undefined,
    query.before ? lt(activity.createdAt, query.before) : undefined,
    query.cursor ? (newestFirst ? lt(activity.createdAt, query.cursor) : gt(activity.createdAt, query.cursor)) : undefined,
  ];
  const rows = await db
    .select()
    .from(activity)
    .where(and(...conditions))
    .orderBy(newestFirst ? desc(activity.createdAt) : asc(activity.createdAt))
    .limit(query.limit + 1);
  const page = rows.slice(0, query.limit).map(toEntry);
  const more = rows.length > query.limit;
  return { entries: page, next_cursor: more ? page[page.length - 1].created_at : null };
}

function toEntry(row: typeof activity.$inferSelect): ActivityEntry {
  return {
    id: String(row.id),
    resource: row.resource,
    resource_id: row.resourceId,
    action: row.action,
    actor_id: row.actorId,
    actor_type: row.actorType,
    summary: row.summary,
    changes: row.changes as Changes,
    created_at: toIso(row.createdAt),
  };
}
