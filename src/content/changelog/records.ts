/**
 * The changelog entry record (spec 2.7) as both interfaces return it, how a stored row becomes one, and how
 * an entry is found by its `:identifier` (slug or version).
 */
import { eq, getTableColumns, or, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { toIso } from '../../platform/time.js';
import { CHANGELOG_STATUSES, CHANGELOG_TYPES } from '../contract.js';
import { changelogEntries } from '../schema.js';
import { workflowDates, workflowPage } from '../workflow.js';

export type ChangelogStatus = (typeof CHANGELOG_STATUSES)[number];
export type ChangelogType = (typeof CHANGELOG_TYPES)[number];

/** An entry as lists show it: everything but the markdown body. */
export const changelogEntrySummary = z.object({
  slug: z.string(),
  version: z.string(),
  title: z.string(),
  summary: z.string().nullable(),
  type: z.enum(CHANGELOG_TYPES),
  highlights: z.array(z.string()),
  status: z.enum(CHANGELOG_STATUSES),
  ...workflowDates,
});
export type ChangelogEntrySummary = z.infer<typeof changelogEntrySummary>;

/** The entry record of spec 2.7. */
export const changelogEntry = changelogEntrySummary.extend({ content: z.string() });
export type ChangelogEntry = z.infer<typeof changelogEntry>;

export const entryPage = workflowPage('entries', changelogEntrySummary);
export type EntryPage = z.infer<typeof entryPage>;

export type EntryRow = typeof changelogEntries.$inferSelect;
const { content: _content, searchText: _searchText, ...listColumns } = getTableColumns(changelogEntries);
/** The columns lists read: all but the markdown body and the search text. */
export const summaryColumns = listColumns;

export function toSummary(row: Omit<EntryRow, 'content' | 'searchText'>): ChangelogEntrySummary {
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

export function toEntry(row: EntryRow): ChangelogEntry {
  const { slug, version, title, summary, ...rest } = toSummary(row);
  return { slug, version, title, summary, content: row.content, ...rest };
}

export /** Slugs never contain dots and versions always do, so one identifier matches at most one entry. */
function byIdentifier(identifier: string): SQL | undefined {
  return or(eq(changelogEntries.slug, identifier), eq(changelogEntries.version, identifier));
}
