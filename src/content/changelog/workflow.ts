/**
 * Writes of changelog entries (spec 2.7, 3.2; DESIGN section 3): create, edit, draft → review → published,
 * direct publish, and deletes of drafts only. An entry is found by its slug or its version (`:identifier`);
 * versions are unique. REST routes and MCP tools both call these functions; the records are in records.ts,
 * the reads in queries.ts.
 *
 * Decisions where the spec is silent:
 * - `published_at` is set once, at the first publication, and keeps the entry's place in the list after.
 *   Publishing an entry that is already published changes nothing and records nothing.
 * - `created_at` is written with `orderedNow()` so the drafts list pages by it without skips or repeats.
 * - `setEntryStatus` (MCP update_changelog_entry) treats the current status as a no-op, so an update that
 *   repeats it succeeds; every other move than draft → review and review → published is refused.
 */
import { eq, type SQL } from 'drizzle-orm';
import type { Queryable, Tx } from '../../platform/database.js';
import { orderedNow } from '../../platform/time.js';
import { recordActivity } from '../activity.js';
import type { Actor } from '../actor.js';
import type { ContentContext } from '../context.js';
import type { CreateEntryInput, EntryStatusInput, UpdateEntryInput } from '../contract.js';
import { contentErrors } from '../errors.js';
import { VERSION_PATTERN } from '../fields.js';
import { requestRevalidation } from '../revalidation.js';
import { changelogEntries } from '../schema.js';
import { uniqueSlug } from '../slugs.js';
import { allowMove, defineWorkflow, editFields, runMove, type FieldEdit, type FieldProblem, type Workflow } from '../workflow.js';
import { writeContent } from '../write.js';
import { byIdentifier, toEntry, type ChangelogEntry, type ChangelogStatus, type EntryRow } from './records.js';

/** `/changelog/drafts` is a route of its own, so no entry may take that slug. */
const RESERVED_SLUGS = new Set(['drafts']);

/** DESIGN 3: the default slug is the version with dots as dashes (`v1.4.0` → `v1-4-0`). */
export function versionSlug(version: string): string {
  return version.replaceAll('.', '-');
}

export async function createEntry(ctx: ContentContext, data: CreateEntryInput, actor: Actor): Promise<ChangelogEntry> {
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
          publishedAt: published ? orderedNow() : null,
          createdAt: orderedNow(),
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

/** The fields an update may change, and how they are stored. */
const entryEdit: FieldEdit<EntryRow, ChangelogEntry, 'title' | 'summary' | 'content' | 'type' | 'highlights'> = {
  fields: ['title', 'summary', 'content', 'type', 'highlights'],
  toRecord: toEntry,
  columns: (after) => ({ title: after.title, summary: after.summary, content: after.content, type: after.type, highlights: after.highlights }),
  summary: (row, fields) => `updated ${fields.join(', ')} of changelog entry ${row.version}`,
};

/** Edits an entry in any state; an edit of a published entry asks the site to rebuild its pages. */
export async function updateEntry(ctx: ContentContext, identifier: string, data: UpdateEntryInput, actor: Actor): Promise<ChangelogEntry> {
  return editFields(ctx, entryWorkflow, identifier, data, entryEdit, actor);
}

/** DESIGN 3 changelog submit validation: title and content present, version well formed. */
export function submitProblems(entry: Pick<ChangelogEntry, 'title' | 'content' | 'version'>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!entry.title.trim()) problems.push({ field: 'title', message: 'is required' });
  if (!entry.content.trim()) problems.push({ field: 'content', message: 'is required' });
  if (!VERSION_PATTERN.test(entry.version)) problems.push({ field: 'version', message: 'must have the form v<major>.<minor>.<patch>' });
  return problems;
}

/**
 * The entry workflow of spec 3.2: draft → review → published, publishing from any state, deleting drafts
 * only. Nothing moves back to draft.
 */
const entryWorkflow: Workflow<ChangelogStatus, EntryRow, 'submit' | 'approve' | 'publish' | 'reopen' | 'delete'> = defineWorkflow({
  kind: 'changelog',
  table: changelogEntries,
  noun: 'entry',
  lock: lockEntry,
  moves: {
    submit: {
      from: ['draft'],
      to: 'review',
      refusal: 'only a draft can be submitted',
      check: (row) => submitProblems(row),
      action: 'status_changed',
      summary: (row) => `submitted changelog entry ${row.version} for review`,
    },
    approve: {
      from: ['review'],
      to: 'published',
      refusal: 'only an entry in review can be approved',
      action: 'published',
      summary: (row) => `approved and published changelog entry ${row.version}`,
      revalidates: true,
    },
    publish: {
      from: ['draft', 'review'],
      to: 'published',
      refusal: 'a published entry cannot be published again',
      action: 'published',
      summary: (row) => `published changelog entry ${row.version}`,
      revalidates: true,
    },
    reopen: {
      from: [],
      to: 'draft',
      refusal: 'a changelog entry cannot move back to draft',
      action: 'status_changed',
      summary: (row) => `reopened changelog entry ${row.version}`,
    },
    delete: { from: ['draft'], refusal: 'only a draft can be deleted' },
  },
});

/** Spec 3.2: draft → review, when the entry passes submit validation (422 listing every failure). */
export async function submitEntry(ctx: ContentContext, identifier: string, actor: Actor): Promise<ChangelogEntry> {
  return toEntry(await runMove(ctx, entryWorkflow, 'submit', identifier, actor));
}

/** Spec 3.2: review → published; an entry that is not in review is refused. */
export async function approveEntry(ctx: ContentContext, identifier: string, actor: Actor): Promise<ChangelogEntry> {
  return toEntry(await runMove(ctx, entryWorkflow, 'approve', identifier, actor));
}

/** Spec 3.2: any state → published directly. An already published entry is returned unchanged. */
export async function publishEntry(ctx: ContentContext, identifier: string, actor: Actor): Promise<ChangelogEntry> {
  return toEntry(await runMove(ctx, entryWorkflow, 'publish', identifier, actor, { whenAlreadyThere: 'unchanged' }));
}

/** The workflow move MCP update_changelog_entry makes for each status it may ask for (spec 3.2). */
const MOVE_TO = { draft: 'reopen', review: 'submit', published: 'approve' } as const;

/**
 * The status moves of MCP update_changelog_entry (spec 3.2): draft → review (with submit validation) and
 * review → published only; a draft cannot go straight to published. Asking for the current status is a
 * no-op.
 */
export async function setEntryStatus(
  ctx: ContentContext,
  identifier: string,
  status: EntryStatusInput,
  actor: Actor,
): Promise<ChangelogEntry> {
  return toEntry(await runMove(ctx, entryWorkflow, MOVE_TO[status], identifier, actor, { whenAlreadyThere: 'unchanged' }));
}

/** Spec 3.2: hard delete of drafts only; entries in review or published are refused. */
export async function deleteEntry(ctx: ContentContext, identifier: string, actor: Actor): Promise<{ slug: string; version: string; deleted: true }> {
  return writeContent(ctx, 'changelog', async (tx, changed) => {
    const row = await lockEntry(tx, identifier);
    allowMove(entryWorkflow.noun, entryWorkflow.moves.delete, row);
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
