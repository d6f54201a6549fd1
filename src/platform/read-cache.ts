/**
 * A bounded in-memory cache of reads, kept exact by the change feed (changes.ts).
 *
 * Following a feed, the cache drops what a change makes stale the moment this process hears of the change
 * (the kinds it depends on; with `byKey`, only the changed key), drops everything on a feed `reset`, and
 * serves nothing while the feed is not live. Two races are closed by a generation counter bumped with every
 * drop: a read that began before a change and finishes after it is not stored (it may hold the old data);
 * an entry stored just before the change arrived is dropped by it.
 *
 * `maxAgeMs` is only a safety net (a write that bypassed the feed, such as a hand-made SQL update, shows after
 * at most that long). Entries are dropped least recently used first past `maxEntries` or `maxBytes`.
 */
import type { ChangeEvent, ChangeFeed } from './changes.js';

export interface ReadCacheOptions<V> {
  maxAgeMs: number;
  maxEntries: number;
  /** Most bytes of values kept in all, as measured by `sizeOf`; a value larger than this is not kept. */
  maxBytes?: number;
  sizeOf?: (value: V) => number;
}

export interface FollowOptions {
  /** The change kinds this cache's values are read from. */
  kinds: readonly string[];
  /** A change naming a key drops only that key's entry (values that each depend on one record). */
  byKey?: boolean;
}

interface Entry<V> {
  value: V;
  size: number;
  storedAt: number;
}

export class ReadCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inFlight = new Map<string, Promise<V | undefined>>();
  private bytes = 0;
  private feed: ChangeFeed | undefined;
  /** Bumped by every drop, so a read that began before it cannot store what it read. */
  generation = 0;

  constructor(private readonly options: ReadCacheOptions<V>) {}

  /** Keeps this cache exact by `feed`; without a feed it only expires entries by age. */
  follow(feed: ChangeFeed, follow: FollowOptions): this {
    this.feed = feed;
    const kinds = new Set(follow.kinds);
    feed.subscribe((event: ChangeEvent) => {
      if (event.type === 'reset') return this.clear();
      const relevant = event.changes.filter((change) => kinds.has(change.kind));
      if (relevant.length === 0) return;
      if (follow.byKey && relevant.every((change) => change.key !== undefined)) {
        this.generation++;
        for (const change of relevant) {
          this.inFlight.delete(change.key!);
          this.delete(change.key!);
        }
      } else {
        this.clear();
      }
    });
    return this;
  }

  /** False while the feed it follows is not live: nothing may be served or stored then. */
  get serving(): boolean {
    return this.feed === undefined || this.feed.live;
  }

  /**
   * The cached value, or `load()`'s, stored when no change arrived meanwhile. Concurrent misses of one key share
   * one load. Neither a rejected load nor an `undefined` result (nothing found) is kept, nor a value `keep`
   * refuses (one that may still change without a change being announced).
   */
  async read(key: string, load: () => Promise<V | undefined>, keep?: (value: V) => boolean): Promise<V | undefined>;
  async read(key: string, load: () => Promise<V>, keep?: (value: V) => boolean): Promise<V>;
  async read(key: string, load: () => Promise<V | undefined>, keep: (value: V) => boolean = () => true): Promise<V | undefined> {
    if (!this.serving) return load();
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const loading = load().then(
      (value) => {
        if (this.inFlight.get(key) === loading) this.inFlight.delete(key);
        if (value !== undefined && this.serving && generation === this.generation && keep(value)) this.set(key, value);
        return value;
      },
      (error: unknown) => {
        if (this.inFlight.get(key) === loading) this.inFlight.delete(key);
        throw error;
      },
    );
    this.inFlight.set(key, loading);
    return loading;
  }

  get(key: string, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now - entry.storedAt >= this.options.maxAgeMs) {
      this.delete(key);
      return undefined;
    }
    // Map order is recency order: a hit moves to the end.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, storedAt = Date.now()): void {
    const size = this.options.sizeOf?.(value) ?? 0;
    const maxBytes = this.options.maxBytes ?? Infinity;
    this.delete(key);
    if (size > maxBytes) return;
    this.entries.set(key, { value, size, storedAt });
    this.bytes += size;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.options.maxEntries && this.bytes <= maxBytes) break;
      this.delete(oldest);
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.size;
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.inFlight.clear();
    this.bytes = 0;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** `operation` and the query as JSON with its keys sorted, so two equal queries give one key whatever their key order. */
export function readCacheKey(operation: string, query: Readonly<Record<string, unknown>>): string {
  const sorted = Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return `${operation}:${JSON.stringify(sorted)}`;
}

/** Freezes a value handed to many callers from one cache entry, so no caller can change it for the others. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
