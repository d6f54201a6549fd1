/**
 * Writes of the public roadmap (spec 2.8, 3.3; DESIGN section 3): items with a status, a priority and a vote
 * count. The records are in records.ts, the reads in queries.ts, votes in content/votes.ts.
 *
 * - Status moves are free (any to any). Entering `shipped` records `shipped_at`; leaving it clears
 *   `shipped_at` and the ship note and changelog version, which describe that shipment.
 * - Non-public items exist only for authenticated readers (REST with the secret, MCP): public reads and
 *   votes answer 404 for them, exactly as for an item that does not exist.
 * - A shipped item cannot be deleted (spec 3.3, 7.2); deleting removes its votes (FK cascade).
 * - `updated_at` is written with `orderedNow()` on every write, so it is unique and serves as a sort key
 *   and cursor. Votes do not touch it: it says when the item itself last changed.
 */
import { asc, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../platform/database.js';
import { orderedFloor, orderedNow } from '../../platform/time.js';
import { diffChanges, recordActivity, type ActivityAction } from '../activity.js';
import type { Actor } from '../actor.js';
import type { ContentContext } from '../context.js';
import { itemPriority, itemStatus, quarterSchema, type CreateItemInput, type UpdateItemInput } from '../contract.js';
import { contentErrors } from '../errors.js';
import { slugSchema, versionSchema } from '../fields.js';
import { requestRevalidation } from '../revalidation.js';
import { roadmapItems } from '../schema.js';
import { insertUnderSlug } from '../slugs.js';
import { writeContent, type Changed } from '../write.js';
import { itemColumns, notFound, toItem, type ItemRow, type RoadmapItem } from './records.js';

// ---------------------------------------------------------------------------------------------------------
// Input schemas of the REST-only operations (spec 4.4); the others are the contract's (contract.ts).

export const shipItemInput = z
  .object({
    note: z.string().max(2_000).optional().describe('what shipped, shown with the item'),
    changelog_version: versionSchema.optional().describe('the release that shipped it, e.g. v1.4.0'),
  })
  .strict();
export type ShipItemInput = z.infer<typeof shipItemInput>;

const bulkItem = z
  .object({ slug: slugSchema, status: itemStatus.optional(), quarter: quarterSchema.nullable().optional(), priority: itemPriority.optional() })
  .strict()
  .refine((item) => item.status !== undefined || item.quarter !== undefined || item.priority !== undefined, {
    message: 'give at least one of status, quarter, priority',
  });

export const bulkUpdateInput = z
  .object({
    items: z
      .array(bulkItem)
      .min(1)
      .max(100)
      .refine((items) => new Set(items.map((item) => item.slug)).size === items.length, { message: 'each slug may appear only once' }),
  })
  .strict();
export type BulkUpdateInput = z.infer<typeof bulkUpdateInput>;

/** The fields whose changes the activity log records. */
const TRACKED_FIELDS = [
  'title',
  'description',
  'summary',
  'category',
  'status',
  'priority',
  'quarter',
  'public',
  'shipped_at',
  'ship_note',
  'changelog_version',
] as const satisfies ReadonlyArray<keyof RoadmapItem>;

/** Slugs that name fixed routes (`GET /roadmap/all`, `POST /roadmap/bulk`), so no item may take them. */
const RESERVED_SLUGS = new Set(['all', 'bulk']);

export async function createItem(ctx: ContentContext, input: CreateItemInput, actor: Actor): Promise<RoadmapItem> {
  const item = await writeContent(ctx, 'roadmap', async (tx, changed) => {
    const row = await insertUnderSlug({
      given: input.slug,
      title: input.title,
      reserved: RESERVED_SLUGS,
      isTaken: (candidate) => slugTaken(tx, candidate),
      insert: (slug) =>
        tx
          .insert(roadmapItems)
          .values({
            slug,
            title: input.title,
            description: input.description,
            summary: input.summary,
            category: input.category,
            status: input.status ?? 'planned',
            priority: input.priority ?? 'medium',
            quarter: input.quarter,
            public: input.public ?? true,
            shippedAt: input.status === 'shipped' ? sql`now()` : null,
            createdAt: orderedFloor(),
            updatedAt: orderedNow(),
          })
          .onConflictDoNothing({ target: roadmapItems.slug })
          .returning(itemColumns)
          .then((rows) => rows[0]),
    });
    const created = toItem(row);
    changed(created.slug);
    await recordActivity(tx, actor, {
      resource: 'roadmap',
      resourceId: created.slug,
      action: 'created',
      summary: `created roadmap item '${created.title}'`,
    });
    if (created.public) await requestRevalidation(ctx, tx, { type: 'roadmap', slug: created.slug });
    return created;
  });
  ctx.jobs.wake();
  return item;
}

async function slugTaken(tx: Tx, slug: string): Promise<boolean> {
  if (RESERVED_SLUGS.has(slug)) return true;
  const [row] = await tx.select({ id: roadmapItems.id }).from(roadmapItems).where(eq(roadmapItems.slug, slug)).limit(1);
  return row !== undefined;
}

export async function updateItem(ctx: ContentContext, slug: string, input: UpdateItemInput, actor: Actor): Promise<RoadmapItem> {
  if (Object.values(input).every((value) => value === undefined)) {
    throw contentErrors.invalidRequest('nothing to update: give any of title, description, summary, category, status, priority, quarter, public');
  }
  const item = await writeContent(ctx, 'roadmap', async (tx, changed) => {
    const before = await lockItem(tx, slug);
    const action = input.status !== undefined && input.status !== before.status ? 'status_changed' : 'updated';
    return applyChange(ctx, tx, changed, actor, before, input, action);
  });
  ctx.jobs.wake();
  return toItem(item);
}

/** Spec 3.3: any status to shipped, recording `shipped_at`; shipping a shipped item keeps its date and may amend the note. */
export async function shipItem(ctx: ContentContext, slug: string, input: ShipItemInput, actor: Actor): Promise<RoadmapItem> {
  const item = await writeContent(ctx, 'roadmap', async (tx, changed) => {
    const before = await lockItem(tx, slug);
    const change = { status: 'shipped' as const, ship_note: input.note, changelog_version: input.changelog_version };
    if (before.status === 'shipped') return applyChange(ctx, tx, changed, actor, before, change, 'updated');
    return applyChange(ctx, tx, changed, actor, before, change, 'status_changed', `shipped roadmap item '${before.title}'`);
  });
  ctx.jobs.wake();
  return toItem(item);
}

/**
 * Spec 4.4 bulk update: all or nothing in one transaction. Every slug is checked before anything is
 * written, so an unknown one answers 404 and changes nothing. The log gets one `bulk_updated` entry per
 * item that changed (resource_id = its slug), so filtering the log by an item shows its bulk changes too;
 * an item already holding the given values is left as it is, like any update that changes nothing.
 */
export async function bulkUpdateItems(ctx: ContentContext, input: BulkUpdateInput, actor: Actor): Promise<{ items: RoadmapItem[] }> {
  const items = await writeContent(ctx, 'roadmap', async (tx, changed) => {
    const slugs = input.items.map((item) => item.slug);
    // Locked in id order, so two overlapping bulk updates wait for each other instead of deadlocking.
    const rows = await tx
      .select(itemColumns)
      .from(roadmapItems)
      .where(inArray(roadmapItems.slug, slugs))
      .orderBy(asc(roadmapItems.id))
      .for('update');
    const bySlug = new Map(rows.map((row) => [row.slug, row]));
    const missing = slugs.find((slug) => !bySlug.has(slug));
    if (missing) throw notFound(missing);

    const updated: RoadmapItem[] = [];
    for (const { slug, ...change } of input.items) {
      const summaryText = `bulk update of ${input.items.length} roadmap items: '${bySlug.get(slug)!.title}'`;
      updated.push(toItem(await applyChange(ctx, tx, changed, actor, bySlug.get(slug)!, change, 'bulk_updated', summaryText)));
    }
    return updated;
  });
  ctx.jobs.wake();
  return { items };
}

/** Spec 3.3 and 4.3 delete_roadmap_item: a shipped item is refused; the votes go with the item (FK cascade). */
export async function deleteItem(ctx: ContentContext, slug: string, actor: Actor): Promise<{ slug: string; deleted: true }> {
  await writeContent(ctx, 'roadmap', async (tx, changed) => {
    const before = await lockItem(tx, slug);
    if (before.status === 'shipped') {
      throw contentErrors.invalidState(`roadmap item '${slug}' is shipped; a shipped item cannot be deleted`, before.status);
    }
    changed(slug);
    await tx.delete(roadmapItems).where(eq(roadmapItems.id, before.id));
    await recordActivity(tx, actor, {
      resource: 'roadmap',
      resourceId: slug,
      action: 'deleted',
      summary: `deleted roadmap item '${before.title}'`,
    });
    if (before.public) await requestRevalidation(ctx, tx, { type: 'roadmap', slug });
  });
  ctx.jobs.wake();
  return { slug, deleted: true };
}

async function lockItem(tx: Tx, slug: string): Promise<ItemRow> {
  const [row] = await tx.select(itemColumns).from(roadmapItems).where(eq(roadmapItems.slug, slug)).for('update');
  if (!row) throw notFound(slug);
  return row;
}

/** What an update, a ship or a bulk entry may set; `undefined` leaves a field as it is. */
interface Change extends UpdateItemInput {
  ship_note?: string;
  changelog_version?: string;
}

/**
 * Applies a change to a locked row with the status rule of DESIGN 3, records it, and, when the public
 * roadmap shows the item before or after, asks the site to rebuild its pages (an item turned non-public
 * must disappear from them too). A change that would alter nothing writes nothing and logs nothing.
 */
async function applyChange(
  ctx: ContentContext,
  tx: Tx,
  changed: Changed,
  actor: Actor,
  before: ItemRow,
  change: Change,
  action: ActivityAction,
  summaryText?: string,
): Promise<ItemRow> {
  const current = toItem(before);
  const alters = Object.entries(change).some(([field, value]) => value !== undefined && value !== current[field as keyof RoadmapItem]);
  if (!alters) return before;
  changed(before.slug);

  const entering = change.status === 'shipped' && before.status !== 'shipped';
  const leaving = change.status !== undefined && change.status !== 'shipped' && before.status === 'shipped';
  const [after] = await tx
    .update(roadmapItems)
    .set({
      title: change.title,
      description: change.description,
      summary: change.summary,
      category: change.category,
      status: change.status,
      priority: change.priority,
      quarter: change.quarter,
      public: change.public,
      shipNote: leaving ? null : change.ship_note,
      changelogVersion: leaving ? null : change.changelog_version,
      shippedAt: entering ? sql`now()` : leaving ? null : undefined,
      updatedAt: orderedNow(),
    })
    .where(eq(roadmapItems.id, before.id))
    .returning(itemColumns);

  const changes = diffChanges(current, toItem(after), TRACKED_FIELDS);
  await recordActivity(tx, actor, {
    resource: 'roadmap',
    resourceId: after.slug,
    action,
    summary: summaryText ?? `updated ${Object.keys(changes).join(', ')} of roadmap item '${after.title}'`,
    changes,
  });
  if (before.public || after.public) await requestRevalidation(ctx, tx, { type: 'roadmap', slug: after.slug });
  return after;
}
