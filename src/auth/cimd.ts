/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document; spec 4.1, DESIGN 4.7): an
 * https URL used as `client_id` names a JSON document holding the client's metadata, so a client can skip
 * registration.
 *
 * Fetching a URL a stranger chose is a server-side request forgery risk, so the fetch is bounded in size
 * and time, follows no redirects, and refuses private, loopback, link-local, unique-local and unspecified
 * addresses. The address is checked where the connection is made (a custom DNS lookup, plus IP literals
 * before connecting), so a hostname that resolves to 169.254.169.254 is refused like the literal is.
 * `ATRIUM_CIMD_ALLOW_LOOPBACK` admits loopback (and plain http to it) for development and tests only.
 *
 * Documents are cached in `oauth_clients` for a bounded time, so every process shares the cache.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { eq, sql } from 'drizzle-orm';
import type { AuthContext } from './context.js';
import { parseClientMetadata, type Client, type ClientMetadata } from './client-metadata.js';
import { InvalidClient, isOAuthError } from './errors.js';
import { isLoopbackHost } from './redirect-uri.js';
import { oauthClients } from './schema.js';

export const CIMD_LIMITS = {
  maxBytes: 5 * 1024,
  timeoutMs: 3_000,
  /** Cache lifetime bounds, in seconds; without a Cache-Control max-age the default applies. */
  minTtl: 60,
  defaultTtl: 3_600,
  maxTtl: 86_400,
};

/** Addresses a metadata document may never be fetched from. */
const forbiddenAddresses = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", including the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  forbiddenAddresses.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['64:ff9b::', 96], // NAT64: may lead to any IPv4 address above
  ['2002::', 16], // 6to4: likewise
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  forbiddenAddresses.addSubnet(network, prefix, 'ipv6');
}

/** BlockList also matches IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) against these. */
const loopbackAddresses = new BlockList();
loopbackAddresses.addSubnet('127.0.0.0', 8, 'ipv4');
loopbackAddresses.addAddress('::1', 'ipv6');

export function isMetadataDocumentClientId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

/** The client a metadata document URL describes: from the cache while fresh, else fetched and checked. */
export async function loadMetadataDocumentClient(ctx: AuthContext, url: string): Promise<Client> {
  const allowLoopback = ctx.config.cimdAllowLoopback;
  checkClientIdUrl(url, allowLoopback);

  const [cached] = await ctx.db
    .select()
    .from(oauthClients)
    .where(sql`${oauthClients.id} = ${url} AND ${oauthClients.kind} = 'metadata_document' AND ${oauthClients.cachedUntil} > now()`);
  if (cached) return cached;

  const { body, cacheControl } = await fetchMetadataDocument(new URL(url), allowLoopback);
  const metadata = checkMetadataDocument(url, body);
  const ttl = cacheLifetime(cacheControl);
  const row = { ...metadata, kind: 'metadata_document' as const, cachedUntil: sql`now() + make_interval(secs => ${ttl})` };
  const [client] = await ctx.db
    .insert(oauthClients)
    .values({ id: url, ...row })
    .onConflictDoUpdate({ target: oauthClients.id, set: row, where: eq(oauthClients.kind, 'metadata_document') })
    .returning();
  if (!client) throw new InvalidClient('client_id is not a usable metadata document URL');
  return client;
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

/** Fetches the document with the size, time and address limits above; never follows a redirect. */
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
    const timer = setTimeout(() => request.destroy(new Error(`no complete answer within ${CIMD_LIMITS.timeoutMs} ms`)), CIMD_LIMITS.timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      fail(error.message);
    });
    request.on('response', (response) => {
      // CIMD §4: a 200 with the document; redirects are not followed.
      if (response.statusCode !== 200) {
        request.destroy(new Error(`answered HTTP ${response.statusCode}`));
        return;
      }
      if (Number(response.headers['content-length'] ?? 0) > CIMD_LIMITS.maxBytes) {
        request.destroy(new Error(`larger than ${CIMD_LIMITS.maxBytes} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > CIMD_LIMITS.maxBytes) request.destroy(new Error(`larger than ${CIMD_LIMITS.maxBytes} bytes`));
        else chunks.push(chunk);
      });
      response.on('end', () => {
        clearTimeout(timer);
        if (size > CIMD_LIMITS.maxBytes) return;
        const cacheControl = response.headers['cache-control'];
        resolve({ body: Buffer.concat(chunks).toString('utf8'), cacheControl });
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

export function isAllowedAddress(address: string, allowLoopback: boolean): boolean {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  if (loopbackAddresses.check(address, family)) return allowLoopback;
  return !forbiddenAddresses.check(address, family);
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
