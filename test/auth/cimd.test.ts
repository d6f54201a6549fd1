import http from 'node:http';
import { sql } from 'drizzle-orm';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAuthorizationRequest } from '../../src/auth/authorization.js';
import { CIMD_LIMITS, isAllowedAddress } from '../../src/auth/cimd.js';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import { authorize, authorizeAndApprove, consentRequestId, redeemCode, refresh, REDIRECT_URI, type TestClient } from '../helpers/auth-flow.js';
import * as oauth from 'oauth4webapi';

/** A local server of client ID metadata documents, good and bad, counting how often each is fetched. */
async function startDocumentServer() {
  const hits = new Map<string, number>();
  const server = http.createServer((request, response) => {
    const path = request.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const self = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
    const document = (extra: Record<string, unknown> = {}) =>
      JSON.stringify({ client_id: self, client_name: 'Document Client', redirect_uris: [REDIRECT_URI], ...extra });
    const send = (body: string, headers: Record<string, string> = {}) => {
      response.writeHead(200, { 'content-type': 'application/json', ...headers });
      response.end(body);
    };
    switch (path) {
      case '/client.json':
      case '/cached.json':
        return send(document(), { 'cache-control': 'max-age=600' });
      case '/big.json':
        return send(document({ padding: 'x'.repeat(6 * 1024) }));
      case '/big-chunked.json': {
        response.writeHead(200, { 'content-type': 'application/json' });
        const write = (left: number) => {
          if (left === 0 || response.destroyed) return response.end();
          response.write(' '.repeat(1024), () => write(left - 1));
        };
        return write(20);
      }
      case '/slow.json':
        return setTimeout(() => send(document()), 5_000).unref();
      case '/slow-body.json':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"client_id":');
        return setTimeout(() => response.end(`"${self}"}`), 5_000).unref();
      case '/redirect.json':
        response.writeHead(302, { location: '/client.json' });
        return response.end();
      case '/other-id.json':
        return send(document({ client_id: 'https://elsewhere.example.com/client.json' }));
      case '/secret.json':
        return send(document({ client_secret: 'shh' }));
      case '/bad-redirect.json':
        return send(document({ redirect_uris: ['javascript:alert(1)'] }));
      case '/not-json.json':
        return send('<html>hello</html>');
      default:
        if (path.startsWith('/doc/')) return send(document());
        if (path.startsWith('/hold/')) return setTimeout(() => send(document()), 5_000).unref();
        response.writeHead(404);
        return response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, hits, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('which addresses a metadata document may come from', () => {
  it.each([
    ['93.184.216.34', true],
    ['2606:2800:220:1:248:1893:25c8:1946', true],
    ['127.0.0.1', false],
    ['127.8.9.10', false],
    ['::1', false],
    ['::ffff:127.0.0.1', false],
    ['169.254.169.254', false],
    ['fe80::1', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['192.168.1.1', false],
    ['100.64.0.1', false],
    ['fc00::1', false],
    ['fd12:3456::1', false],
    ['0.0.0.0', false],
    ['::', false],
    ['::ffff:169.254.169.254', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    // Gaps of the old blocklist: IPv4-compatible (::/96), site-local, NAT64 local-use, and more.
    ['::7f00:1', false],
    ['::808:808', false],
    ['fec0::1', false],
    ['64:ff9b:1::7f00:1', false],
    ['64:ff9b::a9fe:a9fe', false],
    ['2002:7f00:1::1', false],
    ['2001:db8::1', false],
    ['100::1', false],
    ['::ffff:a9fe:a9fe', false],
    ['192.0.2.1', false],
    ['not an address', false],
  ])('%s → %s', (address, allowed) => {
    expect(isAllowedAddress(address, false)).toBe(allowed);
  });

  it('admits loopback, and only loopback, with the development setting', () => {
    expect(isAllowedAddress('127.0.0.1', true)).toBe(true);
    expect(isAllowedAddress('::1', true)).toBe(true);
    expect(isAllowedAddress('169.254.169.254', true)).toBe(false);
    expect(isAllowedAddress('10.0.0.1', true)).toBe(false);
  });
});

describe.each(engines)('client ID metadata documents on %s', (engine) => {
  let docs: Awaited<ReturnType<typeof startDocumentServer>>;
  let org: TestOrg;
  let strictOrg: TestOrg;
  const perAddress = CIMD_LIMITS.fetchesPerAddressPerMinute;
  beforeAll(async () => {
    // Every request here comes from 127.0.0.1; the limit has tests of its own below.
    CIMD_LIMITS.fetchesPerAddressPerMinute = 10_000;
    docs = await startDocumentServer();
    org = await startOrg(engine, { config: { cimdAllowLoopback: true } });
    strictOrg = await startOrg(engine);
  });
  afterAll(async () => {
    CIMD_LIMITS.fetchesPerAddressPerMinute = perAddress;
    await org?.close();
    await strictOrg?.close();
    await docs?.close();
  });

  async function authorizeError(target: TestOrg, clientId: string) {
    const response = await target.request('GET', `/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: REDIRECT_URI, response_type: 'code' })}`, {
      headers: { accept: 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    return response.body as { error: string; error_description: string };
  }

  it('lets a client use its document URL as client_id, end to end', async () => {
    const clientId = `${docs.base}/client.json`;
    const pending = await authorize(org, { clientId });
    const request = await getAuthorizationRequest(org.service.ctx, consentRequestId(pending.location));
    expect(request).toMatchObject({ clientId, clientName: 'Document Client', redirectHost: '127.0.0.1' });

    const issuer = new URL(org.config.authPublicUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true }));
    const tc: TestClient = { as, client: { client_id: clientId }, clientId, resource: `${org.url}/mcp` };
    const tokens = await redeemCode(tc, await authorizeAndApprove(org, { clientId }));
    expect(tokens.access_token).toMatch(/^atr_at_/);
    expect((await refresh(tc, tokens.refresh_token!)).access_token).toMatch(/^atr_at_/);
  });

  it('caches the document within its lifetime', async () => {
    const clientId = `${docs.base}/cached.json`;
    const before = docs.hits.get('/cached.json') ?? 0;
    await authorize(org, { clientId });
    await authorize(org, { clientId });
    await authorize(org, { clientId });
    expect((docs.hits.get('/cached.json') ?? 0) - before).toBe(1);
  });

  it.each([
    ['larger than 5 KB', '/big.json', /larger than 5120 bytes/],
    ['larger than 5 KB without a length', '/big-chunked.json', /larger than 5120 bytes/],
    ['slower than 3 s to answer', '/slow.json', /within 3000 ms/],
    ['slower than 3 s to finish', '/slow-body.json', /within 3000 ms/],
    ['a redirect', '/redirect.json', /HTTP 302/],
    ['missing', '/missing.json', /HTTP 404/],
    ['naming another client_id', '/other-id.json', /different client_id/],
    ['holding a client secret', '/secret.json', /client_secret/],
    ['with a javascript: redirect URI', '/bad-redirect.json', /scheme javascript:/],
    ['not JSON', '/not-json.json', /not JSON/],
  ])('refuses a document %s', async (_case, path, reason) => {
    const started = Date.now();
    const body = await authorizeError(org, `${docs.base}${path}`);
    expect(body.error).toBe('invalid_client');
    expect(body.error_description).toMatch(reason);
    expect(Date.now() - started).toBeLessThan(4_500);
  });

  it.each([
    ['127.0.0.1', 'https://127.0.0.1/client.json', /not public/],
    ['the cloud metadata address', 'https://169.254.169.254/latest/meta-data/client.json', /not public/],
    ['a private network', 'https://10.0.0.8/client.json', /not public/],
    ['IPv6 loopback', 'https://[::1]/client.json', /not public/],
    ['IPv6 link-local', 'https://[fe80::1]/client.json', /not public/],
    ['IPv4-mapped loopback', 'https://[::ffff:7f00:1]/client.json', /not public/],
    ['a host name resolving to loopback', 'https://localhost/client.json', /resolves to/],
    ['plain http', 'http://client.example.com/client.json', /must use https/],
    ['a URL without a path', 'https://client.example.com/', /must have a path/],
    ['a URL with a fragment', 'https://client.example.com/c.json#x', /fragment/],
    ['a URL with user information', 'https://user@client.example.com/c.json', /user information/],
    ['a URL with dot segments', 'https://client.example.com/a/../c.json', /canonical/],
  ])('refuses %s without the development setting', async (_case, clientId, reason) => {
    const body = await authorizeError(strictOrg, clientId);
    expect(body.error).toBe('invalid_client');
    expect(body.error_description).toMatch(reason);
  });

  it('refuses the loopback document server itself without the development setting', async () => {
    const body = await authorizeError(strictOrg, `${docs.base}/client.json`);
    expect(body.error_description).toMatch(/must use https/);
    expect((await authorizeError(strictOrg, `${docs.base.replace('http:', 'https:')}/client.json`)).error_description).toMatch(/not public/);
  });

  it('refuses link-local and private addresses even with the development setting', async () => {
    expect((await authorizeError(org, 'https://169.254.169.254/latest/client.json')).error_description).toMatch(/not public/);
    expect((await authorizeError(org, 'http://169.254.169.254/latest/client.json')).error_description).toMatch(/must use https/);
    expect((await authorizeError(org, 'https://192.168.0.1/client.json')).error_description).toMatch(/not public/);
  });
});

describe.each(engines)('client ID metadata document fetch limits on %s', (engine) => {
  let docs: Awaited<ReturnType<typeof startDocumentServer>>;
  let org: TestOrg;
  beforeAll(async () => {
    docs = await startDocumentServer();
    org = await startOrg(engine, { config: { cimdAllowLoopback: true, trustProxy: 'true' } });
  });
  afterAll(async () => {
    await org?.close();
    await docs?.close();
  });

  const hitsUnder = (prefix: string) => [...docs.hits].filter(([path]) => path.startsWith(prefix)).reduce((sum, [, n]) => sum + n, 0);
  const authorizeFrom = (address: string, clientId: string) =>
    org.request('GET', `/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: REDIRECT_URI, response_type: 'code' })}`, {
      headers: { accept: 'application/json', 'x-forwarded-for': address },
    });

  it('fetches at most the per-address limit of distinct URLs for one anonymous address', async () => {
    const statuses: number[] = [];
    for (let n = 0; n < 30; n++) statuses.push((await authorizeFrom('203.0.113.60', `${docs.base}/doc/a-${n}.json`)).status);
    expect(hitsUnder('/doc/a-')).toBe(CIMD_LIMITS.fetchesPerAddressPerMinute);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30 - CIMD_LIMITS.fetchesPerAddressPerMinute);
    const refused = await authorizeFrom('203.0.113.60', `${docs.base}/doc/a-last.json`);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('too_many_requests');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A cached document costs nothing, and another address has its own allowance.
    expect((await authorizeFrom('203.0.113.60', `${docs.base}/doc/a-0.json`)).status).toBe(302);
    expect((await authorizeFrom('203.0.113.61', `${docs.base}/doc/a-other.json`)).status).toBe(302);
  });

  it('holds at most the in-flight limit of fetches at once, refusing the rest at once', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_unused, n) => authorizeFrom(`198.51.100.${n + 1}`, `${docs.base}/hold/${n}.json`)),
    );
    expect(hitsUnder('/hold/')).toBe(CIMD_LIMITS.maxInFlight);
    expect(responses.filter((response) => response.status === 429)).toHaveLength(20 - CIMD_LIMITS.maxInFlight);
    expect(responses.filter((response) => response.status === 400 && response.body.error === 'invalid_client')).toHaveLength(CIMD_LIMITS.maxInFlight);
  });

  it('gives back the in-flight place of every refused document, so refusals cannot lock the door', async () => {
    const refusals = ['/big.json', '/big-chunked.json', '/redirect.json', '/not-json.json'];
    for (let n = 0; n < 3 * CIMD_LIMITS.maxInFlight; n++) {
      const response = await authorizeFrom(`192.0.2.${n + 1}`, `${docs.base}${refusals[n % refusals.length]}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('invalid_client');
    }
    expect((await authorizeFrom('192.0.2.200', `${docs.base}/doc/after-refusals.json`)).status).toBe(302);
  });

  it('caps the cached documents no grant uses, evicting the least fresh', async () => {
    const cap = CIMD_LIMITS.maxCachedDocuments;
    CIMD_LIMITS.maxCachedDocuments = 3;
    try {
      for (let n = 0; n < 6; n++) expect((await authorizeFrom(`203.0.113.${100 + n}`, `${docs.base}/doc/c-${n}.json`)).status).toBe(302);
      const cached = await org.service.ctx.database.rows<{ id: string }>(sql`SELECT id FROM oauth_clients WHERE kind = 'metadata_document'`);
      expect(cached.length).toBeLessThanOrEqual(3);
      expect(cached.map((row) => row.id)).toContain(`${docs.base}/doc/c-5.json`);
    } finally {
      CIMD_LIMITS.maxCachedDocuments = cap;
    }
  });
});
