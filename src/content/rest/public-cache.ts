/**
 * The public read cache, so the public site's GETs are cheap to serve and cacheable.
 *
 * Anonymous GETs of routes flagged `config: { publicCache: true }` are answered from the serialized
 * response kept per URL in this process, without touching the database, before the request is routed.
 * Every such GET, anonymous or not, carries a strong ETag and answers `If-None-Match` with 304
 * (RFC 9110 §13.1.2, §15.4.5).
 *
 * Freshness comes from the change feed (platform/changes.ts): every content write, made by this process,
 * another process on the same PostgreSQL database or the job worker, empties the cache when it commits —
 * in this process before the write's response leaves, elsewhere as soon as the notification arrives. While
 * the feed is down the cache serves nothing. `maxAgeMs` (default 60 s) is only a safety net for writes that
 * bypass the domain layer.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ChangeFeed } from '../../platform/changes.js';
import { answerBeforeRouting } from '../../platform/early-answers.js';
import type { HttpServer } from '../../platform/http.js';
import { ReadCache } from '../../platform/read-cache.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Anonymous GETs of this route may be served from the public read cache (rest/public-cache.ts). */
    publicCache?: boolean;
  }
}

export interface PublicCacheOptions {
  /** The change kinds whose writes empty the cache. */
  kinds: readonly string[];
  /** Safety-net lifetime of an entry, for writes that bypass the change feed. Default 60,000 ms. */
  maxAgeMs?: number;
  /** Most entries kept; the least recently used goes first. Default 1000. */
  maxEntries?: number;
  /** Most bytes of bodies kept in all. Default 32 MiB. */
  maxBytes?: number;
  /**
   * `false`: never serve or store a response (the service's `readCaches: false`, for benchmarks and
   * diagnostics); ETags and 304 answers stay. Default true.
   */
  serve?: boolean;
}

interface CachedResponse {
  /** Encoded once when stored, so a hit writes the bytes as they are (no string to encode per request). */
  body: Buffer;
  etag: string;
  /** Everything an anonymous hit sends besides the body, worked out once when stored. */
  headers: Readonly<Record<string, string>>;
  /** What a 304 answer sends: the validators and the cache policy. */
  validators: Readonly<Record<string, string>>;
  /** The route pattern that answered (`/blog/:slug`), for the metrics and the log. */
  route: string;
  storedAt: number;
}

/** Serialized responses by URL, measured by the bytes of their bodies. */
export class PublicReadCache extends ReadCache<CachedResponse> {
  constructor(options: { maxAgeMs: number; maxEntries: number; maxBytes: number }) {
    super({ ...options, sizeOf: (entry) => entry.body.length });
  }

  override set(url: string, entry: CachedResponse): void {
    super.set(url, entry, entry.storedAt);
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

export function registerPublicCache(app: HttpServer, feed: ChangeFeed, options: PublicCacheOptions): PublicReadCache {
  const { kinds, serve = true, ...bounds } = options;
  const cache = new PublicReadCache({ maxAgeMs: 60_000, maxEntries: 1000, maxBytes: 32 * 1024 * 1024, ...bounds }).follow(feed, { kinds });
  /** The generation an anonymous miss started in; present only while such a request runs. */
  const missesStartedIn = new WeakMap<FastifyRequest, number>();

  const isCacheable = (request: FastifyRequest) => request.method === 'GET' && request.routeOptions.config?.publicCache === true;
  const isAnonymous = (request: FastifyRequest) => request.headers.authorization === undefined;

  // A hit is answered as soon as Node has parsed the request (platform/early-answers.ts). An entry exists only
  // for a URL a cacheable route answered, and routing depends on the method and URL alone (no constraints), so
  // the same URL reaches the same route again.
  answerBeforeRouting(app, function answerFromCache(request, response) {
    if (!serve || request.method !== 'GET' || request.headers.authorization !== undefined || !cache.serving) return undefined;
    const entry = cache.get(request.url ?? '', Date.now());
    if (!entry) return undefined;
    if (ifNoneMatchHits(request.headers['if-none-match'], entry.etag)) response.writeHead(304, entry.validators).end();
    else response.writeHead(200, entry.headers).end(entry.body);
    return entry.route;
  });

  // Everything not answered early reaches Fastify (`app.inject` always does): an anonymous GET of a cacheable
  // route is then a miss, rendered by its handler and stored by tagAndStore if nothing changed meanwhile.
  app.addHook('onRequest', async function noteMiss(request) {
    // A request that skips this hook is never stored either: tagAndStore keeps only misses recorded here.
    if (serve && isCacheable(request) && isAnonymous(request) && cache.serving) missesStartedIn.set(request, cache.generation);
  });

  app.addHook('onSend', async function tagAndStore(request, reply, payload) {
    if (!isCacheable(request) || reply.statusCode !== 200 || reply.hasHeader('etag')) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;

    const etag = etagOf(payload);
    const anonymous = isAnonymous(request);
    setValidatorHeaders(reply, etag, anonymous);
    const startedIn = missesStartedIn.get(request);
    if (anonymous && startedIn === cache.generation && cache.serving) {
      const body = Buffer.from(payload);
      const validators = { etag, vary: String(reply.getHeader('vary')), 'cache-control': String(reply.getHeader('cache-control')) };
      const headers = {
        'content-type': String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'),
        'content-length': String(body.length),
        ...validators,
      };
      cache.set(request.url, { body, etag, headers, validators, route: request.routeOptions.url ?? request.url, storedAt: Date.now() });
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
  // An authenticated answer already says no-store (rest/auth.ts noStoreWhenAuthenticated).
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', anonymous ? 'public, no-cache' : 'no-store');
}
