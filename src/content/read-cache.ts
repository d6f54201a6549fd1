/**
 * The domain read cache: what content reads return, kept per process and shared by the REST routes and the
 * MCP tools, since both call the same domain functions. The change feed keeps it exact (platform/read-cache.ts):
 * every content write, from any process, drops the entries of its kind when it commits, and nothing is served
 * while the feed is down. That is why drafts and previews (MCP reads and authenticated REST reads) may be cached
 * too: they are dropped by the very same notices as published content.
 *
 * A read inside a transaction (a write's own checks, `atomically`) never uses the cache: it must see its
 * transaction's uncommitted state, which must never be stored for others.
 */
import type { ChangeFeed } from '../platform/changes.js';
import { deepFreeze, ReadCache, readCacheKey } from '../platform/read-cache.js';
import type { ContentContext } from './context.js';
import { READ_SOURCES, type ContentKind, type ContentReads, type ReadSource } from './kinds.js';

export interface ContentReadsOptions {
  /** Safety net for writes that bypass the domain layer; default 60 s. */
  maxAgeMs?: number;
  /** Per source; default 2000 entries and 16 MiB (of JSON text). */
  maxEntries?: number;
  maxBytes?: number;
}

export function createContentReads(feed: ChangeFeed, options: ContentReadsOptions = {}): ContentReads {
  const make = (kinds: readonly ContentKind[]) =>
    new ReadCache<unknown>({
      maxAgeMs: options.maxAgeMs ?? 60_000,
      maxEntries: options.maxEntries ?? 2000,
      maxBytes: options.maxBytes ?? 16 * 1024 * 1024,
      sizeOf: (value) => JSON.stringify(value).length,
    }).follow(feed, { kinds });
  return { blog: make(READ_SOURCES.blog), changelog: make(READ_SOURCES.changelog), roadmap: make(READ_SOURCES.roadmap), search: make(READ_SOURCES.search) };
}

/**
 * `load()`'s result, from the cache when `ctx` reads outside any transaction. The key is derived from the
 * operation's name and its whole parsed query (every argument and the visibility), so a parameter added to
 * a query can never be left out of its key. Results are frozen: one object is handed to many callers.
 * Without a cache (`readCaches: false`, service.ts) every call loads.
 */
export async function cachedRead<T>(
  ctx: ContentContext,
  source: ReadSource,
  operation: string,
  query: Readonly<Record<string, unknown>>,
  load: () => Promise<T>,
): Promise<T> {
  if (!ctx.reads || ctx.db !== ctx.database.db) return load();
  return (await ctx.reads[source].read(readCacheKey(operation, query), async () => deepFreeze(await load()))) as T;
}

/** Where content's key rule lives now, shared with the organization's caches; its test still imports it from here. */
export { readCacheKey };
