/**
 * The public read cache (issue 2 item 8; CONTENT.md "Public GETs must be cacheable").
 *
 * Anonymous GETs of routes flagged `config: { publicCache: true }` are answered from the serialized
 * response kept per URL in this process, without touching the database. Every such GET, anonymous or not,
 * carries a strong ETag and answers `If-None-Match` with 304 (RFC 9110 §13.1.2, §15.4.5).
 *
 * Freshness: every write this process answers (any non-GET that is not refused with a 4xx) empties the
 * cache before its response leaves, so a client that reads after its own write sees it. Writes made by
 * other processes on the same PostgreSQL database, and scheduled publishing done by the job worker, show up
 * within `maxAgeMs` (default 1 s): that is the staleness bound of an anonymous read.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpServer } from '../../platform/http.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Anonymous GETs of this route may be served from the public read cache (rest/public-cache.ts). */
    publicCache?: boolean;
  }
}

export interface PublicCacheOptions {
  /** How long an entry is served; bounds how stale another process's write can look. Default 1000 ms. */
  maxAgeMs?: number;
  /** Most entries kept; the oldest goes first. Default 1000. */
  maxEntries?: number;
  /** Most bytes of bodies kept in all. Default 32 MiB. */
  maxBytes?: number;
}

interface CachedResponse {
  body: string;
  etag: string;
  contentType: string;
  storedAt: number;
}

/** Writes that are refused with a 4xx change nothing (CONTENT.md), so they leave the cache alone. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export class PublicReadCache {
  private readonly entries = new Map<string, CachedResponse>();
  private bytes = 0;
  /** Bumped by every clear, so a read that began before a write cannot store what it read. */
  generation = 0;

  constructor(private readonly options: Required<PublicCacheOptions>) {}

  get(url: string, now: number): CachedResponse | undefined {
    const entry = this.entries.get(url);
    if (entry && now - entry.storedAt >= this.options.maxAgeMs) {
      this.delete(url, entry);
      return undefined;
    }
    return entry;
  }

  set(url: string, entry: CachedResponse): void {
    const size = Buffer.byteLength(entry.body);
    if (size > this.options.maxBytes) return;
    const previous = this.entries.get(url);
    if (previous) this.delete(url, previous);
    this.entries.set(url, entry);
    this.bytes += size;
    // Map iteration is insertion order: the first key is the oldest entry.
    for (const [oldest, old] of this.entries) {
      if (this.entries.size <= this.options.maxEntries && this.bytes <= this.options.maxBytes) break;
      this.delete(oldest, old);
    }
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.bytes = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  private delete(url: string, entry: CachedResponse): void {
    this.entries.delete(url);
    this.bytes -= Buffer.byteLength(entry.body);
  }
}

/** A strong validator: the same bytes always give the same tag, different bytes a different one. */
export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/** RFC 9110 §13.1.2: If-None-Match compares weakly, so `W/"x"` matches `"x"`; `*` matches any. */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

export function registerPublicCache(app: HttpServer, options: PublicCacheOptions = {}): PublicReadCache {
  const cache = new PublicReadCache({ maxAgeMs: 1000, maxEntries: 1000, maxBytes: 32 * 1024 * 1024, ...options });
  /** The generation an anonymous miss started in; present only while such a request runs. */
  const missesStartedIn = new WeakMap<FastifyRequest, number>();

  const isCacheable = (request: FastifyRequest) => request.method === 'GET' && request.routeOptions.config?.publicCache === true;
  const isAnonymous = (request: FastifyRequest) => request.headers.authorization === undefined;

  app.addHook('onRequest', async function serveFromCache(request, reply) {
    if (!isCacheable(request) || !isAnonymous(request)) return;
    const entry = cache.get(request.url, Date.now());
    if (!entry) {
      missesStartedIn.set(request, cache.generation);
      return;
    }
    setValidatorHeaders(reply, entry.etag, true);
    if (ifNoneMatchHits(request.headers['if-none-match'], entry.etag)) return reply.code(304).send();
    return reply.code(200).type(entry.contentType).send(entry.body);
  });

  app.addHook('onSend', async function tagAndStore(request, reply, payload) {
    if (!SAFE_METHODS.has(request.method)) {
      if (reply.statusCode < 400 || reply.statusCode >= 500) cache.clear();
      return payload;
    }
    if (!isCacheable(request) || reply.statusCode !== 200 || reply.hasHeader('etag')) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;

    const etag = etagOf(payload);
    const anonymous = isAnonymous(request);
    setValidatorHeaders(reply, etag, anonymous);
    const startedIn = missesStartedIn.get(request);
    if (anonymous && startedIn === cache.generation) {
      const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
      cache.set(request.url, { body: payload.toString(), etag, contentType, storedAt: Date.now() });
    }
    if (ifNoneMatchHits(request.headers['if-none-match'], etag)) {
      reply.code(304);
      return null;
    }
    return payload;
  });

  return cache;
}

/**
 * `no-cache` lets browsers and CDNs keep the body but revalidate it each time, which the ETag makes
 * cheap; `Vary: Authorization` keeps an authenticated view (drafts, previews) out of shared caches.
 */
function setValidatorHeaders(reply: FastifyReply, etag: string, anonymous: boolean): void {
  reply.header('etag', etag);
  reply.header('vary', 'Authorization');
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', anonymous ? 'public, no-cache' : 'private, no-cache');
}
