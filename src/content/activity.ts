/**
 * The activity log (DESIGN section 3): every write records who did what to which resource, with the
 * changed fields as `[before, after]`. Entries are written in the write's own transaction, so a write
 * and its entry land or fail together.
 */
import { and, eq, gt, lt } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, Queryable } from '../platform/database.js';
import { keysetPage } from '../platform/paging.js';
import { orderedNow, toIso } from '../platform/time.js';
import type { Actor } from './actor.js';
import { ACTIVITY_ACTIONS, ACTIVITY_RESOURCES, type ActivityQuery } from './contract.js';
import { activity, type Changes } from './schema.js';

export type ActivityResource = (typeof ACTIVITY_RESOURCES)[number];
export type ActivityAction = (typeof ACTIVITY_ACTIONS)[number];

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
    createdAt: orderedNow(),
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

/** One entry of the log (DESIGN section 3). */
export const activityEntry = z.object({
  id: z.string(),
  resource: z.string(),
  resource_id: z.string(),
  action: z.string(),
  actor_id: z.string(),
  actor_type: z.string(),
  summary: z.string(),
  changes: z.record(z.string(), z.tuple([z.unknown(), z.unknown()])).describe('{ field: [before, after] }'),
  created_at: z.string(),
});
export type ActivityEntry = z.infer<typeof activityEntry>;

export const activityPage = z.object({ entries: z.array(activityEntry), next_cursor: z.string().nullable() });
export type ActivityPage = z.infer<typeof activityPage>;

/** REST reads the log oldest first; the MCP tool shows the newest first (DESIGN section 3). */
export type ActivityOrder = 'oldest_first' | 'newest_first';

export async function listActivity(db: Db, query: ActivityQuery, order: ActivityOrder): Promise<ActivityPage> {
  const page = await keysetPage(
    db,
    {
      select: db.select().from(activity).$dynamic(),
      from: activity,
      where: and(
        query.resource ? eq(activity.resource, query.resource) : undefined,
        query.resource_id ? eq(activity.resourceId, query.resource_id) : undefined,
        query.actor_type ? eq(activity.actorType, query.actor_type) : undefined,
        query.action ? eq(activity.action, query.action) : undefined,
        query.after ? gt(activity.createdAt, query.after) : undefined,
        query.before ? lt(activity.createdAt, query.before) : undefined,
      ),
      order: { key: 'createdAt', column: activity.createdAt, direction: order },
    },
    query,
  );
  return { entries: page.rows.map(toEntry), next_cursor: page.next_cursor };
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
    changes: row.changes,
    created_at: toIso(row.createdAt),
  };
}
