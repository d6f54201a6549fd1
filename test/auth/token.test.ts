import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAccessToken } from '../../src/auth/tokens.js';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import {
  authorizeAndApprove,
  connectedClient,
  oauthErrorCode,
  PERSON,
  postForm,
  redeemCode,
  refresh,
  registerTestClient,
  revoke,
  type Approved,
  type TestClient,
} from '../helpers/auth-flow.js';

describe.each(engines)('the token endpoint on %s', (engine) => {
  let org: TestOrg;
  let resource: string;
  beforeAll(async () => {
    org = await startOrg(engine);
    resource = `${org.url}/mcp`;
  });
  afterAll(() => org.close());

  const verify = (token: string, forResource = resource) => verifyAccessToken(org.service.ctx, token, forResource);

  function codeForm(tc: TestClient, approved: Approved, overrides: Record<string, string | null> = {}): Record<string, string> {
    const form: Record<string, string | null> = {
      grant_type: 'authorization_code',
      code: approved.code,
      redirect_uri: approved.redirectUri,
      client_id: tc.clientId,
      code_verifier: approved.codeVerifier,
      resource,
      ...overrides,
    };
    return Object.fromEntries(Object.entries(form).filter((entry): entry is [string, string] => entry[1] !== null));
  }

  describe('exchanging a code (oauth4webapi)', () => {
    it('issues opaque prefixed tokens of spec 2.2 with scope, never cached', async () => {
      const tc = await registerTestClient(org);
      const approved = await authorizeAndApprove(org, { clientId: tc.clientId, scope: 'memory:read service:ask' });
      const raw = await postForm(org, '/oauth/token', codeForm(tc, approved));
      expect(raw.status).toBe(200);
      expect(raw.headers.get('cache-control')).toBe('no-store');
      expect(raw.headers.get('content-type')).toMatch(/^application\/json/);
      expect(raw.body).toEqual({
        access_token: expect.stringMatching(/^atr_at_[A-Za-z0-9_-]{43}$/),
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: expect.stringMatching(/^atr_rt_[A-Za-z0-9_-]{43}$/),
        scope: 'service:ask memory:read',
      });
    });

    it('binds the access token to the person, client, scopes and resource', async () => {
      const { tc, tokens } = await connectedClient(org, 'task:read');
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      const verified = await verify(tokens.access_token);
      expect(verified).toEqual({
        personId: PERSON,
        clientId: tc.clientId,
        scopes: ['task:read'],
        grantId: expect.stringMatching(/^atr_gr_/),
        expiresAt: expect.stringMatching(/Z$/),
      });
      const minutes = (Date.parse(verified!.expiresAt) - Date.now()) / 60_000;
      expect(minutes).toBeGreaterThan(59);
      expect(minutes).toBeLessThanOrEqual(60.1);
    });

    it('refuses the access token for any other resource, and unknown or refresh tokens', async () => {
      const { tokens } = await connectedClient(org);
      expect(await verify(tokens.access_token, 'https://other.example.com/mcp')).toBeNull();
      expect(await verify(tokens.access_token, `${resource}/`)).toBeNull();
      expect(await verify(tokens.refresh_token!)).toBeNull();
      expect(await verify('atr_at_not-a-token')).toBeNull();
      expect(await verify('')).toBeNull();
    });

    it('stores only hashes of codes and tokens', async () => {
      const { tokens } = await connectedClient(org);
      const rows = await org.service.database.rows<{ hash: string }>(sql`SELECT hash FROM oauth_tokens`);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.some((row) => row.hash === tokens.access_token || row.hash === tokens.refresh_token)).toBe(false);
      const dump = JSON.stringify(await org.service.database.rows(sql`SELECT * FROM oauth_tokens`));
      expect(dump).not.toContain(tokens.access_token.slice(7));
    });

    it('refuses an expired access token', async () => {
      const { tokens } = await connectedClient(org);
      await org.service.ctx.db.execute(sql`UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE kind = 'access'`);
      expect(await verify(tokens.access_token)).toBeNull();
    });

    it('issues no refresh token to a client that did not register the refresh grant', async () => {
      const tc = await registerTestClient(org, { grant_types: ['authorization_code'] });
      const tokens = await redeemCode(tc, await authorizeAndApprove(org, { clientId: tc.clientId }));
      expect(tokens.refresh_token).toBeUndefined();
      const response = await postForm(org, '/oauth/token', { grant_type: 'refresh_token', refresh_token: 'atr_rt_x', client_id: tc.clientId, resource });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('unauthorized_client');
    });
  });

  describe('attacks on the code', () => {
    let tc: TestClient;
    beforeAll(async () => {
      tc = await registerTestClient(org);
    });

    it('a replayed code is refused and revokes the tokens it issued', async () => {
      const approved = await authorizeAndApprove(org, { clientId: tc.clientId });
      const tokens = await redeemCode(tc, approved);
      expect(await verify(tokens.access_token)).not.toBeNull();

      const replay = await postForm(org, '/oauth/token', codeForm(tc, approved));
      expect(replay.status).toBe(400);
      expect(replay.body.error).toBe('invalid_grant');

      expect(await verify(tokens.access_token)).toBeNull();
      await expect(refresh(tc, tokens.refresh_token!)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
    });

    it.each([
      ['a wrong code_verifier', { code_verifier: 'x'.repeat(43) }, 400, 'invalid_grant'],
      ['a malformed code_verifier', { code_verifier: 'short' }, 400, 'invalid_grant'],
      ['a missing code_verifier', { code_verifier: null }, 400, 'invalid_request'],
      ['a mismatched redirect_uri', { redirect_uri: 'http://127.0.0.1:9999/callback' }, 400, 'invalid_grant'],
      ['a missing redirect_uri', { redirect_uri: null }, 400, 'invalid_request'],
      ['a mismatched resource', { resource: 'https://other.example.com/mcp' }, 400, 'invalid_target'],
      ['a missing resource', { resource: null }, 400, 'invalid_target'],
      ['an unknown code', { code: 'atr_ac_unknown' }, 400, 'invalid_grant'],
      ['a missing code', { code: null }, 400, 'invalid_request'],
      ['an unknown client', { client_id: 'atr_cl_unknown' }, 401, 'invalid_client'],
      ['a missing client_id', { client_id: null }, 400, 'invalid_request'],
      ['the password grant', { grant_type: 'password' }, 400, 'unsupported_grant_type'],
      ['the client credentials grant', { grant_type: 'client_credentials' }, 400, 'unsupported_grant_type'],
      ['a missing grant_type', { grant_type: null }, 400, 'invalid_request'],
    ])('%s is refused (%i %s) without consuming the code', async (_case, overrides, status, error) => {
      const approved = await authorizeAndApprove(org, { clientId: tc.clientId });
      const response = await postForm(org, '/oauth/token', codeForm(tc, approved, overrides));
      expect(response.status).toBe(status);
      expect(response.body).toEqual({ error, error_description: expect.any(String) });
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect((await postForm(org, '/oauth/token', codeForm(tc, approved))).status).toBe(200);
    });

    it('a code issued to another client is refused', async () => {
      const other = await registerTestClient(org);
      const approved = await authorizeAndApprove(org, { clientId: tc.clientId });
      const response = await postForm(org, '/oauth/token', codeForm(tc, approved, { client_id: other.clientId }));
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('invalid_grant');
    });

    it('a code older than 60 seconds is refused', async () => {
      const approved = await authorizeAndApprove(org, { clientId: tc.clientId });
      const lifetime = await org.service.database.rows<{ seconds: number }>(
        sql`SELECT extract(epoch FROM expires_at - created_at)::int AS seconds FROM oauth_codes ORDER BY created_at DESC LIMIT 1`,
      );
      expect(lifetime[0].seconds).toBe(60);
      await org.service.ctx.db.execute(sql`UPDATE oauth_codes SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`);
      const response = await postForm(org, '/oauth/token', codeForm(tc, approved));
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('invalid_grant');
    });

    it('takes form bodies only, and no client credentials', async () => {
      const approved = await authorizeAndApprove(org, { clientId: tc.clientId });
      const json = await org.request('POST', '/oauth/token', { json: codeForm(tc, approved) });
      expect(json.status).toBe(400);
      expect(json.body.error).toBe('invalid_request');
      const basic = await org.request('POST', '/oauth/token', {
        form: codeForm(tc, approved),
        headers: { authorization: `Basic ${Buffer.from(`${tc.clientId}:secret`).toString('base64')}` },
      });
      expect(basic.status).toBe(401);
      expect(basic.body.error).toBe('invalid_client');
    });
  });

  describe('refreshing (oauth4webapi)', () => {
    it('rotates the refresh token on every use', async () => {
      const { tc, tokens } = await connectedClient(org);
      const first = await refresh(tc, tokens.refresh_token!);
      expect(first.refresh_token).toMatch(/^atr_rt_/);
      expect(first.refresh_token).not.toBe(tokens.refresh_token);
      expect(first.scope).toBe('service:ask memory:read');
      expect(first.expires_in).toBe(3600);
      expect((await verify(first.access_token))?.scopes).toEqual(['service:ask', 'memory:read']);
      const second = await refresh(tc, first.refresh_token!);
      expect(await verify(second.access_token)).not.toBeNull();
    });

    it('a refresh token reused after the reuse interval is refused and revokes the grant', async () => {
      const { tc, tokens } = await connectedClient(org);
      const rotated = await refresh(tc, tokens.refresh_token!);
      await org.service.ctx.db.execute(sql`UPDATE oauth_tokens SET used_at = now() - interval '31 seconds' WHERE used_at IS NOT NULL`);
      await expect(refresh(tc, tokens.refresh_token!)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
      expect(await verify(rotated.access_token)).toBeNull();
      expect(await verify(tokens.access_token)).toBeNull();
      await expect(refresh(tc, rotated.refresh_token!)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
    });

    it('may narrow the scope; the next refresh token keeps the grant’s scope', async () => {
      const { tc, tokens } = await connectedClient(org, 'service:ask memory:read task:read');
      const narrowed = await refresh(tc, tokens.refresh_token!, { scope: 'memory:read' });
      expect(narrowed.scope).toBe('memory:read');
      expect((await verify(narrowed.access_token))?.scopes).toEqual(['memory:read']);
      const again = await refresh(tc, narrowed.refresh_token!);
      expect(again.scope).toBe('service:ask memory:read task:read');
    });

    it.each([
      ['a wider scope', { scope: 'service:ask memory:read governance:admin' }, 'invalid_scope'],
      ['an unknown scope', { scope: 'root' }, 'invalid_scope'],
      ['another resource', { resource: 'https://other.example.com/mcp' }, 'invalid_target'],
      ['no resource', { resource: '' }, 'invalid_target'],
    ])('with %s is refused without consuming the token', async (_case, extra, error) => {
      const { tc, tokens } = await connectedClient(org);
      await expect(refresh(tc, tokens.refresh_token!, extra)).rejects.toSatisfy((e) => oauthErrorCode(e) === error);
      const still = await refresh(tc, tokens.refresh_token!);
      expect(await verify(still.access_token)).not.toBeNull();
    });

    it('by another client is refused without consuming the token', async () => {
      const { tc, tokens } = await connectedClient(org);
      const other = await registerTestClient(org);
      await expect(refresh(other, tokens.refresh_token!)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
      await expect(refresh(tc, tokens.refresh_token!)).resolves.toMatchObject({ token_type: expect.any(String) });
    });

    it('refuses an access token presented as refresh token, and an expired refresh token', async () => {
      const { tc, tokens } = await connectedClient(org);
      await expect(refresh(tc, tokens.access_token)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
      await org.service.ctx.db.execute(sql`UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE kind = 'refresh'`);
      await expect(refresh(tc, tokens.refresh_token!)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
    });
  });

  describe('revoking (RFC 7009, oauth4webapi)', () => {
    it('an access token stops working; its refresh token still works', async () => {
      const { tc, tokens } = await connectedClient(org);
      await revoke(tc, tokens.access_token);
      expect(await verify(tokens.access_token)).toBeNull();
      const refreshed = await refresh(tc, tokens.refresh_token!);
      expect(await verify(refreshed.access_token)).not.toBeNull();
    });

    it('a refresh token revokes its grant’s access tokens too', async () => {
      const { tc, tokens } = await connectedClient(org);
      await revoke(tc, tokens.refresh_token!);
      expect(await verify(tokens.access_token)).toBeNull();
      await expect(refresh(tc, tokens.refresh_token!)).rejects.toSatisfy((error) => oauthErrorCode(error) === 'invalid_grant');
    });

    it('answers 200 for unknown and already revoked tokens', async () => {
      const { tc, tokens } = await connectedClient(org);
      await revoke(tc, 'atr_at_unknown');
      await revoke(tc, tokens.access_token);
      await revoke(tc, tokens.access_token);
      const raw = await postForm(org, '/oauth/revoke', { token: 'whatever', client_id: tc.clientId });
      expect(raw.status).toBe(200);
      expect(raw.text).toBe('');
    });

    it('refuses to revoke another client’s token, and a request without a token', async () => {
      const { tokens } = await connectedClient(org);
      const other = await registerTestClient(org);
      const response = await postForm(org, '/oauth/revoke', { token: tokens.access_token, client_id: other.clientId });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('invalid_request');
      expect(await verify(tokens.access_token)).not.toBeNull();
      const missing = await postForm(org, '/oauth/revoke', { client_id: other.clientId });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toBe('invalid_request');
    });
  });
});
