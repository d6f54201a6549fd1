import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  approveAuthorizationRequest,
  denyAuthorizationRequest,
  getAuthorizationRequest,
} from '../../src/auth/authorization.js';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import { authorize, consentRequestId, PERSON, registerTestClient, type TestClient } from '../helpers/auth-flow.js';

describe.each(engines)('the authorization endpoint on %s', (engine) => {
  let org: TestOrg;
  let tc: TestClient;
  beforeAll(async () => {
    org = await startOrg(engine);
    tc = await registerTestClient(org, { redirect_uris: ['http://127.0.0.1/callback', 'https://app.example.com/cb?tenant=a%20b'] });
  });
  afterAll(() => org.close());

  /** The error redirect's parameters, after checking it goes back to the client's redirect URI. */
  function errorParams(location: string, redirectUri = 'http://127.0.0.1:4000/callback') {
    expect(location.startsWith(`${redirectUri}?`)).toBe(true);
    return new URL(location).searchParams;
  }

  describe('a valid request', () => {
    it('is stored and sends the person to the consent page', async () => {
      const pending = await authorize(org, { clientId: tc.clientId, redirectUri: 'http://127.0.0.1:4000/callback', scope: 'memory:read service:ask' });
      expect(pending.status).toBe(302);
      const id = consentRequestId(pending.location);
      expect(id).toMatch(/^atr_rq_/);

      const request = await getAuthorizationRequest(org.service.ctx, id);
      expect(request).toEqual({
        id,
        clientId: tc.clientId,
        clientName: 'Test client',
        redirectHost: '127.0.0.1:4000',
        scopes: ['service:ask', 'memory:read'],
        resource: `${org.url}/mcp`,
        expiresAt: expect.stringMatching(/Z$/),
      });
      const minutes = (Date.parse(request!.expiresAt) - Date.now()) / 60_000;
      expect(minutes).toBeGreaterThan(9);
      expect(minutes).toBeLessThanOrEqual(10.1);
    });

    it('without scope asks for no scope at all (the narrowest default)', async () => {
      const pending = await authorize(org, { clientId: tc.clientId, query: { scope: null } });
      expect((await getAuthorizationRequest(org.service.ctx, consentRequestId(pending.location)))?.scopes).toEqual([]);
    });

    it('is unknown to the consent page once it has expired', async () => {
      const pending = await authorize(org, { clientId: tc.clientId });
      const id = consentRequestId(pending.location);
      await org.service.ctx.db.execute(sql`UPDATE oauth_authorization_requests SET expires_at = now() - interval '1 second' WHERE id = ${id}`);
      expect(await getAuthorizationRequest(org.service.ctx, id)).toBeNull();
      await expect(approveAuthorizationRequest(org.service.ctx, id, PERSON)).rejects.toMatchObject({ code: 'invalid_request' });
    });

    it('is unknown for an id never issued', async () => {
      expect(await getAuthorizationRequest(org.service.ctx, 'atr_rq_nope')).toBeNull();
    });
  });

  describe('the consent outcome', () => {
    it('on approval redirects with a code, the unchanged state and iss (RFC 9207)', async () => {
      const state = 'ünïcode & spaces = ?#/+%20';
      const pending = await authorize(org, { clientId: tc.clientId, redirectUri: 'http://127.0.0.1:4000/callback', state });
      const location = await approveAuthorizationRequest(org.service.ctx, consentRequestId(pending.location), PERSON);
      const url = new URL(location);
      expect(`${url.origin}${url.pathname}`).toBe('http://127.0.0.1:4000/callback');
      expect(url.searchParams.get('code')).toMatch(/^atr_ac_[A-Za-z0-9_-]{43}$/);
      expect(url.searchParams.getAll('state')).toEqual([state]);
      expect(url.searchParams.getAll('iss')).toEqual([org.config.authPublicUrl]);
    });

    it('keeps the redirect URI’s own query exactly as registered', async () => {
      const pending = await authorize(org, { clientId: tc.clientId, redirectUri: 'https://app.example.com/cb?tenant=a%20b' });
      const location = await approveAuthorizationRequest(org.service.ctx, consentRequestId(pending.location), PERSON);
      expect(location.startsWith('https://app.example.com/cb?tenant=a%20b&code=')).toBe(true);
    });

    it('on denial redirects with access_denied, the state and iss', async () => {
      const pending = await authorize(org, { clientId: tc.clientId, redirectUri: 'http://127.0.0.1:4000/callback', state: 'abc' });
      const params = errorParams(await denyAuthorizationRequest(org.service.ctx, consentRequestId(pending.location), PERSON));
      expect(params.get('error')).toBe('access_denied');
      expect(params.get('state')).toBe('abc');
      expect(params.get('iss')).toBe(org.config.authPublicUrl);
      expect(params.has('code')).toBe(false);
    });

    it('answers a request only once', async () => {
      const pending = await authorize(org, { clientId: tc.clientId });
      const id = consentRequestId(pending.location);
      await approveAuthorizationRequest(org.service.ctx, id, PERSON);
      expect(await getAuthorizationRequest(org.service.ctx, id)).toBeNull();
      await expect(approveAuthorizationRequest(org.service.ctx, id, PERSON)).rejects.toMatchObject({ code: 'invalid_request', status: 400 });
      await expect(denyAuthorizationRequest(org.service.ctx, id, PERSON)).rejects.toMatchObject({ code: 'invalid_request' });
    });

    it('lets exactly one of many parallel answers win', async () => {
      const pending = await authorize(org, { clientId: tc.clientId });
      const id = consentRequestId(pending.location);
      const answers = await Promise.allSettled(Array.from({ length: 10 }, () => approveAuthorizationRequest(org.service.ctx, id, PERSON)));
      expect(answers.filter((answer) => answer.status === 'fulfilled')).toHaveLength(1);
    });
  });

  describe('errors shown to the person, never redirected', () => {
    it.each([
      ['an unknown client', { client_id: 'atr_cl_unknown' }, 'invalid_client'],
      ['a missing client_id', { client_id: null }, 'invalid_request'],
      ['a missing redirect_uri', { redirect_uri: null }, 'invalid_request'],
      ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example.com/cb' }, 'invalid_redirect_uri'],
      ['localhost.evil.com', { redirect_uri: 'http://localhost.evil.com:4000/callback' }, 'invalid_redirect_uri'],
      ['a fragment', { redirect_uri: 'http://127.0.0.1:4000/callback#x' }, 'invalid_redirect_uri'],
      ['user@host', { redirect_uri: 'http://evil.com@127.0.0.1:4000/callback' }, 'invalid_redirect_uri'],
    ])('%s → 400 %s as a page', async (_case, query, error) => {
      const response = await org.request('GET', `/oauth/authorize?${authorizeQuery(tc.clientId, query)}`);
      expectErrorPage(response, error);
    });

    it('a repeated redirect_uri → 400 invalid_request as a page', async () => {
      const query = `${authorizeQuery(tc.clientId, {})}&redirect_uri=${encodeURIComponent('https://evil.example.com/')}`;
      expectErrorPage(await org.request('GET', `/oauth/authorize?${query}`), 'invalid_request');
    });

    function expectErrorPage(response: Awaited<ReturnType<TestOrg['request']>>, error: string) {
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(response.text).toContain(error);
    }

    it('answers JSON when the caller asks for JSON', async () => {
      const response = await org.request('GET', `/oauth/authorize?${authorizeQuery('atr_cl_unknown', {})}`, { headers: { accept: 'application/json' } });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: 'invalid_client', error_description: 'unknown client_id' });
    });

    it('escapes what the client sent', async () => {
      const response = await org.request('GET', `/oauth/authorize?${authorizeQuery(tc.clientId, { redirect_uri: 'https://x.example.com/<script>' })}`);
      expect(response.status).toBe(400);
      expect(response.text).not.toContain('<script>');
    });
  });

  describe('errors redirected to the client with state and iss', () => {
    it.each([
      ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
      ['a missing response_type', { response_type: null }, 'invalid_request'],
      ['a missing code_challenge', { code_challenge: null }, 'invalid_request'],
      ['a missing code_challenge_method (plain by default)', { code_challenge_method: null }, 'invalid_request'],
      ['code_challenge_method=plain', { code_challenge_method: 'plain' }, 'invalid_request'],
      ['a malformed code_challenge', { code_challenge: 'short' }, 'invalid_request'],
      ['a missing resource', { resource: null }, 'invalid_target'],
      ['another resource', { resource: 'https://other.example.com/mcp' }, 'invalid_target'],
      ['the resource with a trailing slash', { resource: 'RESOURCE/' }, 'invalid_target'],
      ['an unknown scope', { scope: 'service:ask admin:everything' }, 'invalid_scope'],
    ])('%s → %s', async (_case, query, error) => {
      const resolved = Object.fromEntries(Object.entries(query).map(([k, v]) => [k, v === 'RESOURCE/' ? `${org.url}/mcp/` : v]));
      const pending = await authorize(org, { clientId: tc.clientId, redirectUri: 'http://127.0.0.1:4000/callback', state: 's t&a=te', query: resolved });
      expect(pending.status).toBe(302);
      const params = errorParams(pending.location);
      expect(params.get('error')).toBe(error);
      expect(params.get('error_description')).toBeTruthy();
      expect(params.getAll('state')).toEqual(['s t&a=te']);
      expect(params.get('iss')).toBe(org.config.authPublicUrl);
    });

    it('refuses a repeated parameter', async () => {
      const query = `${authorizeQuery(tc.clientId, {})}&scope=task:read`;
      const response = await org.request('GET', `/oauth/authorize?${query}`);
      expect(response.status).toBe(302);
      expect(new URL(response.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    });

    it('omits state when the client sent none', async () => {
      const pending = await authorize(org, { clientId: tc.clientId, query: { state: null, response_type: 'token' } });
      const params = new URL(pending.location).searchParams;
      expect(params.get('error')).toBe('unsupported_response_type');
      expect(params.has('state')).toBe(false);
    });
  });

  function authorizeQuery(clientId: string, overrides: Record<string, string | null>): string {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:4000/callback',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      state: 'xyz',
      resource: `${org.url}/mcp`,
      scope: 'service:ask',
    });
    for (const [name, value] of Object.entries(overrides)) {
      if (value === null) query.delete(name);
      else query.set(name, value);
    }
    return query.toString();
  }
});
