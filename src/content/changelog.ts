/**
 * Changelog entries (spec 2.7, 3.2; DESIGN section 3): draft → review → published, direct publish, and
 * deletes of drafts only. An entry is found by its slug or its version (`:identifier`); versions are unique.
 * REST routes and MCP tools both call these functions.
 *
 * Decisions where the spec is silent:
 * - `published_at` is set once, at the first publication, and keeps the entry's place in the list after.
 *   Publishing an entry that is already published changes nothing and records nothing.
 * - `created_at` is written with `orderedNow()` so the drafts list pages by it without skips or repeats.
 * - `setEntryStatus` (MCP update_changelog_entry) treats the current status as a no-op, so an update that
 *   repeats it succeeds; every other move than draft → review and review → published is refused.
 */
import { and, count, eq, getTableColumns, inArray, lt, or, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable, Tx } from '../platform/database.js';
import { orderedNow, toIso } from '../platform/time.js';
import { diffChanges, recordActivity, type Changes } from './activity.js';
import type { Actor } from './actor.js';
import type { ContentContext } from './context.js';
import { contentErrors } from './errors.js';
import { isoDate, limitField } from './fields.js';
import { cachedRead } from './read-cache.js';
import { requestRevalidation } from './revalidation.js';
import { CHANGELOG_TYPES, changelogEntries, type CHANGELOG_STATUSES } from './schema.js';
import { slugSchema, uniqueSlug } from './slugs.js';
import { writeContent, type Changed } from './write.js';

export type ChangelogStatus = (typeof CHANGELOG_STATUSES)[number];
export type ChangelogType = (typeof CHANGELOG_TYPES)[number];

/** Spec 2.7: `v<major>.<minor>.<patch>`, without leading zeros. */
export const VERSION_PATTERN = /^v(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})$/;
/** `/changelog/drafts` is a route of its own, so no entry may take that slug. */
const RESERVED_SLUGS = new Set(['drafts']);

// ---------------------------------------------------------------------------------------------------------
// Input schemas

export const versionSchema = z.string().regex(VERSION_PATTERN, 'v<major>.<minor>.<patch>, e.g. v1.4.0');
const titleField = z.string().trim().min(1).max(200);
const summaryField = z.string().max(1_000);
const contentField = z.string().max(200_000).describe('Markdown body');
const typeField = z.enum(CHANGELOG_TYPES);
const highlightsField = z.array(z.string().trim().min(1).max(500)).max(50);

export const createEntryInput = z.strictObject({
  version: versionSchema,
  slug: slugSchema.optional().describe('Default: the version with dots as dashes, e.g. v1-4-0'),
  title: titleField.optional().describe('Default: "Release <version>"'),
  summary: summaryField.optional(),
  content: contentField.optional(),
  type: typeField.default('release'),
  highlights: highlightsField.optional(),
  status: z.enum(['draft', 'published']).default('draft'),
});
export type CreateEntryInput = z.input<typeof createEntryInput>;

/** Any of these; `null` clears the summary. */
export const updateEntryInput = z.strictObject({
  title: titleField.optional(),
  summary: summaryField.nullable().optional(),
  content: contentField.optional(),
  type: typeField.optional(),
  highlights: highlightsField.optional(),
});
export type UpdateEntryInput = z.input<typeof updateEntryInput>;

/** The status moves MCP update_changelog_entry may ask for (spec 3.2). */
export const entryStatusInput = z.enum(['draft', 'review', 'published']);

export const listEntriesInput = z.strictObject({
  limit: limitField(20, 100),
  type: typeField.optional(),
  cursor: isoDate.optional().describe('next_cursor of the previous page'),
});
export type ListEntriesInput = z.input<typeof listEntriesInput>;

export const listDraftEntriesInput = z.strictObject({
  limit: limitField(20, 100),
  cursor: isoDate.optional().describe('next_cursor of the previous page'),
});
export type ListDraftEntriesInput = z.input<typeof listDraftEntriesInput>;

// ---------------------------------------------------------------------------------------------------------
// Records

/** A type alias, not an interface, so it can be diffed as a plain record. */
export type ChangelogEntry = {
  slug: string;
  version: string;
  title: string;
  summary: string | null;
  content: string;
  type: ChangelogType;
  highlights: string[];
  status: ChangelogStatus;
  published_at: string | null;
  created_at: string;
  updated_at: string;
};
/** Lists leave out the markdown body. */
export type ChangelogEntrySummary = Omit<ChangelogEntry, 'content'>;

export interface EntryPage {
  entries: ChangelogEntrySummary[];
  next_cursor: string | null;
  total: number;
}

type EntryRow = typeof changelogEntries.$inferSelect;
const { content: _content, searchText: _searchText, ...summaryColumns } = getTableColumns(changelogEntries);

function toSummary(row: Omit<EntryRow, 'content' | 'searchText'>): ChangelogEntrySummary {
  return {
    slug: row.slug,
    version: row.version,
    title: row.title,
    summary: row.summary,
    type: row.type as ChangelogType,
    highlights: row.highlights,
    status: row.status as ChangelogStatus,
    published_at: toIso(row.publishedAt),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

function toEntry(row: EntryRow): ChangelogEntry {
  const { slug, version, title, summary, ...rest } = toSummary(row);
  return { slug, version, title, summary, content: row.content, ...rest };
}

/** DESIGN 3: the default slug is the version with dots as dashes (`v1.4.0` → `v1-4-0`). */
export function versionSlug(version: string): string {
  return version.replaceAll('.', '-');
}

// ---------------------------------------------------------------------------------------------------------
// Reads

/** Published entries, newest first (spec 4.4); `total` counts every published entry of the type. */
export async function listPublishedEntries(ctx: ContentContext, input: ListEntriesInput = {}): Promise<EntryPage> {
  const query = listEntriesInput.parse(input);
  const matching = and(eq(changelogEntries.status, 'published'), query.type ? eq(changelogEntries.type, query.type) : undefined);
  return cachedRead(ctx, 'changelog', `published:${JSON.stringify([query.limit, query.type, query.cursor])}`, () =>
    pageOf(ctx, matching, 'publishedAt', query),
  );
}

/** Entries not yet public (draft and review), newest created first. */
export async function listDraftEntries(ctx: ContentContext, input: ListDraftEntriesInput = {}): Promise<EntryPage> {
  const query = listDraftEntriesInput.parse(input);
  return cachedRead(ctx, 'changelog', `drafts:${JSON.stringify([query.limit, query.cursor])}`, () =>
    pageOf(ctx, inArray(changelogEntries.status, ['draft', 'review']), 'createdAt', query),
  );
}

/** One page ordered by a unique `orderedNow()` timestamp; the next page is strictly older than the cursor. */
async function pageOf(
  ctx: ContentContext,
  matching: SQL | undefined,
  order: 'publishedAt' | 'createdAt',
  query: { limit: number; cursor?: string },
): Promise<EntryPage> {
  const orderColumn = changelogEntries[order];
  const [rows, [{ total }]] = await Promise.all([
    ctx.db
      .select(summaryColumns)
      .from(changelogEntries)
      .where(and(matching, query.cursor ? lt(orderColumn, query.cursor) : undefined))
      // DESC NULLS LAST, as the published_at index stores it (drizzle's `.desc()`): a plain DESC means NULLS
      // FIRST, which that index cannot serve, so every read would sort the whole table.
      .orderBy(sql`${orderColumn} desc nulls last`)
      .limit(query.limit + 1),
    ctx.db.select({ total: count() }).from(changelogEntries).where(matching),
  ]);
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    entries: page.map(toSummary),
    next_cursor: rows.length > query.limit && last[order] ? toIso(last[order]) : null,
    total: Number(total),
  };
}

/** A published entry by slug or version; with `include_drafts` (authenticated preview) one in any state. */
export async function getEntry(ctx: ContentContext, identifier: string, options: { include_drafts?: boolean } = {}): Promise<ChangelogEntry> {
  const includeDrafts = options.include_drafts ?? false;
  return cachedRead(ctx, 'changelog', `entry:${includeDrafts ? 'any' : 'published'}:${identifier}`, async () => {
    const [row] = await ctx.db.select().from(changelogEntries).where(byIdentifier(identifier)).limit(1);
    if (!row || (row.status !== 'published' && !includeDrafts)) throw contentErrors.notFound('changelog entry', identifier);
    return toEntry(row);
  });
}

// ---------------------------------------------------------------------------------------------------------
// Writes

export async function createEntry(ctx: ContentContext, input: CreateEntryInput, actor: Actor): Promise<ChangelogEntry> {
  const data = createEntryInput.parse(input);
  if (data.slug && RESERVED_SLUGS.has(data.slug)) throw contentErrors.conflict(`slug '${data.slug}' is reserved`, 'slug');
  const published = data.status === 'published';
  const entry = await writeContent(ctx, 'changelog', async (tx, changed) => {
    const insert = (slug: string) =>
      tx
        .insert(changelogEntries)
        .values({
          slug,
          version: data.version,
          title: data.title ?? `Release ${data.version}`,
          summary: data.summary ?? null,
          content: data.content ?? '',
          type: data.type,
          highlights: data.highlights ?? [],
          status: data.status,
          publishedAt: published ? (orderedNow() as unknown as string) : null,
          createdAt: orderedNow() as unknown as string,
        })
        // Both the version and the slug are unique; a clash with either (even with a concurrent create)
        // returns no row instead of failing the transaction, and is told apart below.
        .onConflictDoNothing()
        .returning()
        .then((rows) => rows[0]);
    let row: EntryRow | undefined;
    while (!row) {
      if (await exists(tx, eq(changelogEntries.version, data.version))) {
        throw contentErrors.conflict(`version '${data.version}' already has an entry`, 'version');
      }
      const slug = data.slug ?? (await uniqueSlug(versionSlug(data.version), (candidate) => exists(tx, eq(changelogEntries.slug, candidate))));
      row = await insert(slug);
      if (!row && data.slug && (await exists(tx, eq(changelogEntries.slug, data.slug)))) {
        throw contentErrors.conflict(`slug '${data.slug}' is already taken`, 'slug');
      }
    }
    changed(row.slug);
    await recordActivity(tx, actor, {
      resource: 'changelog',
      resourceId: row.slug,
      action: 'created',
      summary: `created ${row.status} changelog entry ${row.version}`,
    });
    if (published) await requestRevalidation(ctx, tx, { type: 'changelog', slug: row.slug });
    return toEntry(row);
  });
  if (published) ctx.jobs.wake();
  return entry;
}

const UPDATABLE_FIELDS = ['title', 'summary', 'content', 'type', 'highlights'] as const;

/** Edits an entry in any state; an edit of a published entry asks the site to rebuild its pages. */
export async function updateEntry(ctx: ContentContext, identifier: string, input: UpdateEntryInput, actor: Actor): Promise<ChangelogEntry> {
  const data = updateEntryInput.parse(input);
  if (UPDATABLE_FIELDS.every((field) => data[field] === undefined)) {
    throw contentErrors.invalidRequest(`nothing to update: give any of ${UPDATABLE_FIELDS.join(', ')}`);
  }
  const result = await writeContent(ctx, 'changelog', async (tx, changed) => {
    const before = toEntry(await lockEntry(tx, identifier));
    const after: ChangelogEntry = { ...before };
    for (const field of UPDATABLE_FIELDS) if (data[field] !== undefined) Object.assign(after, { [field]: data[field] });
    const changes = diffChanges(before, after, UPDATABLE_FIELDS);
    if (Object.keys(changes).length === 0) return { entry: before, revalidated: false };
    changed(before.slug);
    const [row] = await tx
      .update(changelogEntries)
      .set({
        title: after.title,
        summary: after.summary,
        content: after.content,
        type: after.type,
        highlights: after.highlights,
        updatedAt: sql`now()`,
      })
      .where(eq(changelogEntries.slug, before.slug))
      .returning();
    await recordActivity(tx, actor, {
      resource: 'changelog',
      resourceId: row.slug,
      action: 'updated',
      summary: `updated ${Object.keys(changes).join(', ')} of changelog entry ${row.version}`,
      changes,
    });
    const revalidated = row.status === 'published';
    if (revalidated) await requestRevalidation(ctx, tx, { type: 'changelog', slug: row.slug });
    return { entry: toEntry(row), revalidated };
  });
  if (result.revalidated) ctx.jobs.wake();
  return result.entry;
}

/** DESIGN 3 changelog submit validation: title and content present, version well formed. */
export function submitProblems(entry: Pick<ChangelogEntry, 'title' | 'content' | 'version'>): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  if (!entry.title.trim()) problems.push({ field: 'title', message: 'is required' });
  if (!entry.content.trim()) problems.push({ field: 'content', message: 'is required' });
  if (!VERSION_PATTERN.test(entry.version)) problems.push({ field: 'version', message: 'must have the form v<major>.<minor>.<patch>' });
  return problems;
}

/** Spec 3.2: draft → review, when the entry passes submit validation (422 listing every failure). */
export async function submitEntry(ctx: ContentContext, identifier: string, actor: Actor): Promise<ChangelogEntry> {
  return writeContent(ctx, 'changelog', async (tx, changed) => submitRow(tx, await lockEntry(tx, identifier), actor, changed));
}

/** Spec 3.2: review → published; an entry that is not in review is refused. */
export async function approveEntry(ctx: ContentContext, identifier: string, actor: Actor): Promise<ChangelogEntry> {
  const entry = await writeContent(ctx, 'changelog', async (tx, changed) => approveRow(ctx, tx, await lockEntry(tx, identifier), actor, changed));
  ctx.jobs.wake();
  return entry;
}

/** Spec 3.2: any state → published directly. An already published entry is returned unchanged. */
export async function publishEntry(ctx: ContentContext, identifier: string, actor: Actor): Promise<ChangelogEntry> {
  const result = await writeContent(ctx, 'changelog', async (tx, changed) => {
    const row = await lockEntry(tx, identifier);
    if (row.status === 'published') return { entry: toEntry(row), changed: false };
    changed(row.slug);
    return { entry: await publishRow(ctx, tx, row, actor, `published changelog entry ${row.version}`), changed: true };
  });
  if (result.changed) ctx.jobs.wake();
  return result.entry;
}

/**
 * The status moves of MCP update_changelog_entry (spec 3.2): draft → review (with submit validation) and
 * review → published only; a draft cannot go straight to published. Asking for the current status is a
 * no-op.
 */
export async function setEntryStatus(
  ctx: ContentContext,
  identifier: string,
  status: z.infer<typeof entryStatusInput>,
  actor: Actor,
): Promise<ChangelogEntry> {
  const result = await writeContent(ctx, 'changelog', async (tx, changed) => {
    const row = await lockEntry(tx, identifier);
    if (row.status === status) return { entry: toEntry(row), published: false };
    if (status === 'review') return { entry: await submitRow(tx, row, actor, changed), published: false };
    if (status === 'published') return { entry: await approveRow(ctx, tx, row, actor, changed), published: true };
    throw contentErrors.invalidState(`a changelog entry cannot move from ${row.status} back to ${status}`, row.status);
  });
  if (result.published) ctx.jobs.wake();
  return result.entry;
}

/** Spec 3.2: hard delete of drafts only; entries in review or published are refused. */
export async function deleteEntry(ctx: ContentContext, identifier: string, actor: Actor): Promise<{ slug: string; version: string; deleted: true }> {
  return writeContent(ctx, 'changelog', async (tx, changed) => {
    const row = await lockEntry(tx, identifier);
    if (row.status !== 'draft') throw contentErrors.invalidState(`only a draft can be deleted; this entry is ${row.status}`, row.status);
    changed(row.slug);
    await tx.delete(changelogEntries).where(eq(changelogEntries.id, row.id));
    await recordActivity(tx, actor, {
      resource: 'changelog',
      resourceId: row.slug,
      action: 'deleted',
      summary: `deleted draft changelog entry ${row.version}`,
    });
    return { slug: row.slug, version: row.version, deleted: true as const };
  });
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

/** Slugs never contain dots and versions always do, so one identifier matches at most one entry. */
function byIdentifier(identifier: string): SQL | undefined {
  return or(eq(changelogEntries.slug, identifier), eq(changelogEntries.version, identifier));
}

async function exists(db: Queryable, where: SQL): Promise<boolean> {
  const [row] = await db.select({ id: changelogEntries.id }).from(changelogEntries).where(where).limit(1);
  return Boolean(row);
}

/** Reads an entry and locks its row until the transaction ends, so concurrent moves of one entry serialize. */
async function lockEntry(tx: Tx, identifier: string): Promise<EntryRow> {
  const [row] = await tx.select().from(changelogEntries).where(byIdentifier(identifier)).limit(1).for('update');
  if (!row) throw contentErrors.notFound('changelog entry', identifier);
  return row;
}

async function submitRow(tx: Tx, row: EntryRow, actor: Actor, changed: Changed): Promise<ChangelogEntry> {
  if (row.status !== 'draft') throw contentErrors.invalidState(`only a draft can be submitted; this entry is ${row.status}`, row.status);
  const problems = submitProblems(row);
  if (problems.length > 0) throw contentErrors.validationFailed(problems);
  changed(row.slug);
  return moveStatus(tx, row, 'review', actor, { action: 'status_changed', summary: `submitted changelog entry ${row.version} for review` });
}

async function approveRow(ctx: ContentContext, tx: Tx, row: EntryRow, actor: Actor, changed: Changed): Promise<ChangelogEntry> {
  if (row.status !== 'review') {
    throw contentErrors.invalidState(`only an entry in review can be approved; this entry is ${row.status}`, row.status);
  }
  changed(row.slug);
  return publishRow(ctx, tx, row, actor, `approved and published changelog entry ${row.version}`);
}

async function publishRow(ctx: ContentContext, tx: Tx, row: EntryRow, actor: Actor, summary: string): Promise<ChangelogEntry> {
  const entry = await moveStatus(tx, row, 'published', actor, { action: 'published', summary });
  await requestRevalidation(ctx, tx, { type: 'changelog', slug: row.slug });
  return entry;
}

async function moveStatus(
  tx: Tx,
  row: EntryRow,
  status: ChangelogStatus,
  actor: Actor,
  entry: { action: 'status_changed' | 'published'; summary: string },
): Promise<ChangelogEntry> {
  // The first publication fixes the entry's place in the list; later publishes keep it.
  const publishedAt = sql`coalesce(${changelogEntries.publishedAt}, ${orderedNow()})` as unknown as string;
  const [moved] = await tx
    .update(changelogEntries)
    .set({ status, updatedAt: sql`now()`, ...(status === 'published' ? { publishedAt } : {}) })
    .where(eq(changelogEntries.id, row.id))
    .returning();
  const changes: Changes = { status: [row.status, status] };
  if (moved.publishedAt !== row.publishedAt) changes.published_at = [toIso(row.publishedAt), toIso(moved.publishedAt)];
  await recordActivity(tx, actor, { resource: 'changelog', resourceId: row.slug, action: entry.action, summary: entry.summary, changes });
  return toEntry(moved);
}
