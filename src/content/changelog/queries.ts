/**
 * Reads of changelog entries (spec 4.3, 4.4): the published list, the list of entries not yet public, and
 * one entry by slug or version. Both lists page newest first by a unique timestamp (workflow.ts).
 */
import { and, eq, inArray, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import type { PageRequest } from '../../platform/paging.js';
import type { ContentContext } from '../context.js';
import type { ListEntriesInput } from '../contract.js';
import { contentErrors } from '../errors.js';
import { isoDate, limitField } from '../fields.js';
import { cachedRead } from '../read-cache.js';
import { changelogEntries } from '../schema.js';
import { workflowListPage } from '../workflow.js';
import { byIdentifier, summaryColumns, toEntry, toSummary, type ChangelogEntry, type EntryPage } from './records.js';

/** REST only (`GET /changelog/drafts`). */
export const listDraftEntriesInput = z.strictObject({
  limit: limitField(20, 100),
  cursor: isoDate.optional().describe('next_cursor of the previous page'),
});
export type ListDraftEntriesInput = z.infer<typeof listDraftEntriesInput>;

/** Published entries, newest first (spec 4.4); `total` counts every published entry of the type. */
export async function listPublishedEntries(ctx: ContentContext, query: ListEntriesInput): Promise<EntryPage> {
  const matching = and(eq(changelogEntries.status, 'published'), query.type ? eq(changelogEntries.type, query.type) : undefined);
  return cachedRead(ctx, 'changelog', 'published', query, () => pageOfEntries(ctx, matching, 'publishedAt', query));
}

/** Entries not yet public (draft and review), newest created first. */
export async function listDraftEntries(ctx: ContentContext, query: ListDraftEntriesInput): Promise<EntryPage> {
  return cachedRead(ctx, 'changelog', 'drafts', query, () =>
    pageOfEntries(ctx, inArray(changelogEntries.status, ['draft', 'review']), 'createdAt', query),
  );
}

async function pageOfEntries(ctx: ContentContext, where: SQL | undefined, key: 'publishedAt' | 'createdAt', query: PageRequest): Promise<EntryPage> {
  const select = ctx.db.select(summaryColumns).from(changelogEntries).$dynamic();
  const page = await workflowListPage(ctx.db, select, changelogEntries, where, key, query);
  return { entries: page.rows.map(toSummary), next_cursor: page.next_cursor, total: page.total };
}

/** A published entry by slug or version; with `include_drafts` (authenticated preview) one in any state. */
export async function getEntry(ctx: ContentContext, identifier: string, options: { include_drafts?: boolean } = {}): Promise<ChangelogEntry> {
  const includeDrafts = options.include_drafts ?? false;
  return cachedRead(ctx, 'changelog', 'entry', { identifier, include_drafts: includeDrafts }, async () => {
    const [row] = await ctx.db.select().from(changelogEntries).where(byIdentifier(identifier)).limit(1);
    if (!row || (row.status !== 'published' && !includeDrafts)) throw contentErrors.notFound('changelog entry', identifier);
    return toEntry(row);
  });
}
