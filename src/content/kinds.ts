/**
 * What content writes announce on the change feed (write.ts) and which of those each domain read cache
 * follows (read-cache.ts). Kept apart from both, so the context can name the caches' type without a circle.
 */
import type { ReadCache } from '../platform/read-cache.js';

export const CONTENT_KINDS = ['blog', 'changelog', 'roadmap', 'asset'] as const;
export type ContentKind = (typeof CONTENT_KINDS)[number];

/** Search reads every kind of content; the others one kind each. */
export const READ_SOURCES = {
  blog: ['blog'],
  changelog: ['changelog'],
  roadmap: ['roadmap'],
  search: ['blog', 'changelog', 'roadmap'],
} as const satisfies Record<string, readonly ContentKind[]>;
export type ReadSource = keyof typeof READ_SOURCES;

export type ContentReads = Record<ReadSource, ReadCache<unknown>>;
