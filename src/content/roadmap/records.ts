/**
 * The roadmap item record (spec 2.8) as both interfaces return it, and how a stored row becomes one.
 */
import { z } from 'zod';
import { toIso } from '../../platform/time.js';
import { ROADMAP_CATEGORIES, ROADMAP_PRIORITIES, ROADMAP_STATUSES } from '../contract.js';
import { contentErrors } from '../errors.js';
import { roadmapItems } from '../schema.js';

export type RoadmapStatus = (typeof ROADMAP_STATUSES)[number];
export type RoadmapCategory = (typeof ROADMAP_CATEGORIES)[number];
export type RoadmapPriority = (typeof ROADMAP_PRIORITIES)[number];

/** The item record of spec 2.8 as both interfaces return it. */
export const roadmapItem = z.object({
  slug: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  summary: z.string().nullable(),
  category: z.enum(ROADMAP_CATEGORIES).nullable(),
  status: z.enum(ROADMAP_STATUSES),
  priority: z.enum(ROADMAP_PRIORITIES),
  quarter: z.string().nullable(),
  public: z.boolean(),
  votes: z.number().int(),
  shipped_at: z.string().nullable(),
  ship_note: z.string().nullable(),
  changelog_version: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type RoadmapItem = z.infer<typeof roadmapItem>;

/** Reads that may see non-public items: REST with the secret, and every MCP tool. */
export interface Visibility {
  includeHidden?: boolean;
}

/** Every column but the search text. */
export const itemColumns = {
  id: roadmapItems.id,
  slug: roadmapItems.slug,
  title: roadmapItems.title,
  description: roadmapItems.description,
  summary: roadmapItems.summary,
  category: roadmapItems.category,
  status: roadmapItems.status,
  priority: roadmapItems.priority,
  priorityRank: roadmapItems.priorityRank,
  quarter: roadmapItems.quarter,
  public: roadmapItems.public,
  votes: roadmapItems.votes,
  shippedAt: roadmapItems.shippedAt,
  shipNote: roadmapItems.shipNote,
  changelogVersion: roadmapItems.changelogVersion,
  createdAt: roadmapItems.createdAt,
  updatedAt: roadmapItems.updatedAt,
};
export type ItemRow = Omit<typeof roadmapItems.$inferSelect, 'searchText'>;

export function toItem(row: ItemRow): RoadmapItem {
  return {
    slug: row.slug,
    title: row.title,
    description: row.description,
    summary: row.summary,
    category: row.category as RoadmapCategory | null,
    status: row.status as RoadmapStatus,
    priority: row.priority as RoadmapPriority,
    quarter: row.quarter,
    public: row.public,
    votes: row.votes,
    shipped_at: toIso(row.shippedAt),
    ship_note: row.shipNote,
    changelog_version: row.changelogVersion,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

/** A missing item, or (for a public read or a vote) one that is not public: both are simply not found. */
export function notFound(slug: string) {
  return contentErrors.notFound('roadmap item', slug);
}
