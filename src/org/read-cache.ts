/**
 * The organization's read cache: what the MCP tools read on every call and what seldom changes, kept per process
 * and dropped by the change feed (platform/read-cache.ts) when any process commits a change of its kind
 * (changes.ts). Nothing is served while the feed is down. The verified access tokens are the authorization
 * server's own cache (auth/tokens.ts) and the MCP sessions the endpoint's (platform/mcp/sessions.ts).
 *
 * A read inside a transaction never uses the cache: it must see its transaction's uncommitted state, which
 * must never be stored for others.
 */
import type { ChangeFeed } from '../platform/changes.js';
import type { Database, Queryable } from '../platform/database.js';
import { deepFreeze, ReadCache, readCacheKey } from '../platform/read-cache.js';
import { ORG_DIRECTORY, ORG_MEMORY } from './changes.js';

/** What each source is read from, and how long an entry may live when no change drops it. */
const SOURCES = {
  /**
   * A person's spaces, service_context's person, organization, agents and the client's agent; the agent a work tool
   * acts as or on, and the capability it runs.
   */
  directory: { kinds: [ORG_DIRECTORY], maxAgeMs: 60_000 },
  /**
   * search_memory's pages. Besides writes, time changes them: an item's validity window opens or closes with no
   * write (search.ts compares with now()), so a page lives one second at most, whatever a write drops sooner.
   */
  memory: { kinds: [ORG_MEMORY], maxAgeMs: 1_000 },
  /**
   * get_operation's records, only once they can no longer change (operations.ts `readOperation`): only the names
   * they show can, with the directory.
   */
  operations: { kinds: [ORG_DIRECTORY], maxAgeMs: 60_000 },
} as const satisfies Record<string, { kinds: readonly string[]; maxAgeMs: number }>;

type OrgReadSource = keyof typeof SOURCES;

export type OrgReads = Record<OrgReadSource, ReadCache<unknown>>;

export function createOrgReads(feed: ChangeFeed): OrgReads {
  const make = ({ kinds, maxAgeMs }: { kinds: readonly string[]; maxAgeMs: number }) =>
    new ReadCache<unknown>({ maxAgeMs, maxEntries: 10_000, maxBytes: 16 * 1024 * 1024, sizeOf: (value) => JSON.stringify(value).length }).follow(feed, { kinds });
  return { directory: make(SOURCES.directory), memory: make(SOURCES.memory), operations: make(SOURCES.operations) };
}

/**
 * `load()`'s result, from the cache when `db` is the service's pool (not a transaction). The key is derived from
 * the read's name and its whole query, so an argument added to a read cannot be left out of its key. Results
 * are frozen: one object is handed to many callers. `keep` refuses to keep a value that may still change unannounced.
 */
export async function cachedOrgRead<T>(
  ctx: { reads: OrgReads; database: Database },
  db: Queryable,
  source: OrgReadSource,
  read: string,
  query: Readonly<Record<string, unknown>>,
  load: () => Promise<T>,
  keep?: (value: T) => boolean,
): Promise<T> {
  if (db !== ctx.database.db) return load();
  return (await ctx.reads[source].read(readCacheKey(read, query), async () => deepFreeze(await load()), keep as (value: unknown) => boolean)) as T;
}
