/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document; spec 4.1, DESIGN 4.7): an
 * https URL used as `client_id` names a JSON document holding the client's metadata, so a client can skip
 * registration.
 *
 * Fetching a URL a stranger chose is a server-side request forgery risk, so the fetch is bounded in size
 * and time, follows no redirects, and connects to global unicast addresses only: an allow rule over
 * `ipaddr.js`'s ranges (IPv4-mapped IPv6 judged as the IPv4 address it maps), not a hand-kept blocklist.
 * The address is checked where the connection is made (a custom DNS lookup, plus IP literals before
 * connecting), so a hostname that resolves to 169.254.169.254 is refused like the literal is.
 * `ATRIUM_CIMD_ALLOW_LOOPBACK` admits loopback (and plain http to it) for development and tests only.
 *
 * Anyone may name such a URL, so fetches are limited per client address (counted in the database, DESIGN 6)
 * and in flight per process, and refused with 429 past either limit.
 *
 * Documents are cached in `oauth_clients` for a bounded time, so every process shares the cache; documents
 * no live grant uses are capped in number, the least fresh evicted first (they are fetched again if needed).
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { eq, sql } from 'drizzle-orm';
import type { AuthContext } from './context.js';
import { parseClientMetadata, type Client, type ClientMetadata } from './client-metadata.js';
import { countAttempt } from '../platform/rate-limit.js';
import { InvalidClient, isOAuthError, TooManyRequests } from './errors.js';
import { isLoopbackHost } from './redirect-uri.js';
import { oauthClients } from './schema.js';

export const CIMD_LIMITS = {
  maxBytes: 5 * 1024,
  timeoutMs: 3_000,
  /** Cache lifetime bounds, in seconds; without a Cache-Control max-age the default applies. */
  minTtl: 60,
  defaultTtl: 3_600,
  maxTtl: 86_400,
  /** Fetches one client address may cause per minute (cache hits are free). */
  fetchesPerAddressPerMinute: 10,
  /** Fetches one process runs at once. */
  maxInFlight: 8,
  /** Cached documents kept that no live grant uses. */
  maxCachedDocuments: 1_000,
};

let inFlight = 0;

/** RFC 4291 §2.4: global unicast IPv6 addresses are those in 2000::/3. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

export function isMetadataDocumentClientId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

/** The client a metadata document URL describes: from the cache while fresh, else fetched and checked. */
export async function loadMetadataDocumentClient(ctx: AuthContext, url: string, address?: string): Promise<Client> {
  const allowLoopback = ctx.config.cimdAllowLoopback;
  checkClientIdUrl(url, allowLoopback);

  const [cached] = await ctx.db
    .select()
    .from(oauthClients)
    .where(sql`${oauthClients.id} = ${url} AND ${oauthClients.kind} = 'metadata_document' AND ${oauthClients.cachedUntil} > now()`);
  if (cached) return cached;

  await checkFetchRate(ctx, address);
  if (inFlight >= CIMD_LIMITS.maxInFlight) throw new TooManyRequests('too many client metadata documents are being fetched; try again shortly', 1);
  inFlight++;
  const { body, cacheControl } = await fetchMetadataDocument(new URL(url), allowLoopback).finally(() => inFlight--);
  const metadata = checkMetadataDocument(url, body);
  const ttl = cacheLifetime(cacheControl);
  await evictUnusedDocuments(ctx, url);
  const row = { ...metadata, kind: 'metadata_document' as const, cachedUntil: sql`now() + make_interval(secs => ${ttl})` };
  const [client] = await ctx.db
    .insert(oauthClients)
    .values({ id: url, ...row })
    .onConflictDoUpdate({ target: oauthClients.id, set: row, where: eq(oauthClients.kind, 'metadata_document') })
    .returning();
  if (!client) throw new InvalidClient('client_id is not a usable metadata document URL');
  return client;
}

async function checkFetchRate(ctx: AuthContext, address: string | undefined): Promise<void> {
  if (!address) return;
  const limit = { limit: CIMD_LIMITS.fetchesPerAddressPerMinute, windowSeconds: 60 };
  const outcome = await countAttempt(ctx.db, `cimd:${address}`, limit);
  if (!outcome.allowed) {
    throw new TooManyRequests(
      `too many client metadata documents fetched for this address (at most ${limit.limit} a minute); try again in ${outcome.retryAfter} seconds`,
      outcome.retryAfter,
    );
  }
}

/** Makes room for one more document among those no live grant uses, evicting the least fresh. */
async function evictUnusedDocuments(ctx: AuthContext, incoming: string): Promise<void> {
  await ctx.db.execute(sql`
    DELETE FROM oauth_clients WHERE id IN (
      SELECT c.id FROM oauth_clients c
       WHERE c.kind = 'metadata_document' AND c.id <> ${incoming}
         AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id AND g.revoked_at IS NULL)
       ORDER BY c.cached_until DESC
      OFFSET ${CIMD_LIMITS.maxCachedDocuments - 1})`);
}

/** The client_id URL itself (draft-ietf-oauth-client-id-metadata-document §3). */
function checkClientIdUrl(clientId: string, allowLoopback: boolean): void {
  if (!URL.canParse(clientId)) throw new InvalidClient('client_id URL is malformed');
  const url = new URL(clientId);

  // CIMD §3: the https scheme (plain http only to loopback, and only in development).
  const loopbackHttp = allowLoopback && url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp) throw new InvalidClient('a client_id URL must use https');

  // CIMD §3: a path component, no fragment, no user information, no dot segments; the canonical form
  // also keeps one cache entry per document.
  if (url.pathname === '/') throw new InvalidClient('a client_id URL must have a path');
  if (clientId.includes('#') || url.username || url.password) throw new InvalidClient('a client_id URL must not contain a fragment or user information');
  if (url.href !== clientId) throw new InvalidClient(`a client_id URL must be in canonical form (${url.href})`);
}

/**
 * Fetches the document with the size, time and address limits above; never follows a redirect. Each refusal settles
 * the promise itself: a destroyed request does not always emit 'error' (Node 24 stays silent when the whole answer
 * had already arrived), and a promise left pending would hold its in-flight place for good.
 */
function fetchMetadataDocument(url: URL, allowLoopback: boolean): Promise<{ body: string; cacheControl?: string }> {
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => reject(new InvalidClient(`client metadata document ${url.href} refused: ${reason}`));

    // IP literals never reach the DNS lookup, so they are checked here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !isAllowedAddress(literal, allowLoopback)) return fail(`address ${literal} is not public`);

    const transport = url.protocol === 'https:' ? https : http;
    const request = transport.get(url, {
      agent: false,
      headers: { accept: 'application/json' },
      lookup: publicOnlyLookup(allowLoopback),
    });
    let settled = false;
    const refuse = (reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      fail(reason);
    };
    const timer = setTimeout(() => refuse(`no complete answer within ${CIMD_LIMITS.timeoutMs} ms`), CIMD_LIMITS.timeoutMs);
    request.on('error', (error) => refuse(error.message));
    request.on('response', (response) => {
      // CIMD §4: a 200 with the document; redirects are not followed.
      if (response.statusCode !== 200) return refuse(`answered HTTP ${response.statusCode}`);
      if (Number(response.headers['content-length'] ?? 0) > CIMD_LIMITS.maxBytes) return refuse(`larger than ${CIMD_LIMITS.maxBytes} bytes`);
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > CIMD_LIMITS.maxBytes) refuse(`larger than ${CIMD_LIMITS.maxBytes} bytes`);
        else chunks.push(chunk);
      });
      response.on('error', (error) => refuse(error.message));
      response.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ body: Buffer.concat(chunks).toString('utf8'), cacheControl: response.headers['cache-control'] });
      });
    });
  });
}

/** Resolves as usual, then refuses the connection if any resolved address is not public. */
function publicOnlyLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.find((entry) => !isAllowedAddress(entry.address, allowLoopback));
      if (refused) return callback(new Error(`${hostname} resolves to ${refused.address}, which is not public`), '', 0);
      if (addresses.length === 0) return callback(new Error(`${hostname} does not resolve`), '', 0);
      if (options.all) return (callback as unknown as (error: null, addresses: dns.LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** Global unicast only (loopback too with the development setting); anything unparsable is refused. */
export function isAllowedAddress(address: string, allowLoopback: boolean): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) parsed = parsed.toIPv4Address();
  const range = parsed.range();
  if (range === 'loopback') return allowLoopback;
  if (range !== 'unicast') return false;
  return parsed instanceof ipaddr.IPv4 || parsed.match(GLOBAL_UNICAST_V6);
}

/** CIMD §4.1: a JSON object naming itself as client_id, with metadata we accept from a registration. */
function checkMetadataDocument(url: string, body: string): ClientMetadata {
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    throw new InvalidClient(`client metadata document ${url} is not JSON`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new InvalidClient(`client metadata document ${url} is not a JSON object`);
  }
  // CIMD §4.1: the document's client_id must equal the URL it was fetched from.
  if ((document as { client_id?: unknown }).client_id !== url) {
    throw new InvalidClient(`client metadata document ${url} names a different client_id`);
  }
  // CIMD §4.1: a document is public, so it cannot carry a shared secret.
  if ('client_secret' in document) throw new InvalidClient(`client metadata document ${url} must not contain client_secret`);
  try {
    return parseClientMetadata(document);
  } catch (error) {
    if (isOAuthError(error)) throw new InvalidClient(`client metadata document ${url}: ${error.message}`);
    throw error;
  }
}

/** HTTP caching (RFC 9111 §5.2.2) within our bounds: no-store and no-cache still cache for the minimum. */
function cacheLifetime(cacheControl: string | undefined): number {
  const directives = (cacheControl ?? '').toLowerCase();
  if (/\bno-(store|cache)\b/.test(directives)) return CIMD_LIMITS.minTtl;
  const maxAge = /\bmax-age=(\d+)/.exec(directives);
  const ttl = maxAge ? Number(maxAge[1]) : CIMD_LIMITS.defaultTtl;
  return Math.min(Math.max(ttl, CIMD_LIMITS.minTtl), CIMD_LIMITS.maxTtl);
}
