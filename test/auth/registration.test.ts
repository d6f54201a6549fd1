import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';

describe.each(engines)('dynamic client registration (RFC 7591) on %s', (engine) => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await startOrg(engine, { inProcess: true });
  });
  afterAll(() => org.close());

  const register = (json: unknown) => org.request('POST', '/oauth/register', { json });

  it('answers 201, no-store, with the record of spec 2.1', async () => {
    const before = Math.floor(Date.now() / 1000);
    const response = await register({ client_name: 'Claude', redirect_uris: ['http://127.0.0.1/callback', 'https://app.example.com/cb'] });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body).toEqual({
      client_id: expect.stringMatching(/^atr_cl_[A-Za-z0-9_-]{43}$/),
      client_name: 'Claude',
      redirect_uris: ['http://127.0.0.1/callback', 'https://app.example.com/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      client_id_issued_at: expect.any(Number),
    });
    expect(response.body.client_id_issued_at).toBeGreaterThanOrEqual(before - 1);
    expect(response.body.client_id_issued_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 1);
    expect(response.body).not.toHaveProperty('client_secret');
  });

  it('accepts and returns the scope field MCP clients send, and ignores metadata it does not use', async () => {
    const response = await register({
      redirect_uris: ['http://localhost/callback'],
      scope: 'service:ask memory:read',
      client_uri: 'https://client.example.com',
      logo_uri: 'https://client.example.com/logo.png',
      software_id: 'x',
    });
    expect(response.status).toBe(201);
    expect(response.body.scope).toBe('service:ask memory:read');
    expect(response.body).not.toHaveProperty('client_name');
    expect(response.body).not.toHaveProperty('logo_uri');
  });

  it('issues no secret: a requested secret-based auth method is replaced by none', async () => {
    const response = await register({ redirect_uris: ['http://localhost/callback'], token_endpoint_auth_method: 'client_secret_basic' });
    expect(response.status).toBe(201);
    expect(response.body.token_endpoint_auth_method).toBe('none');
    expect(response.body).not.toHaveProperty('client_secret');
  });

  it('keeps a client to the grant types it asked for', async () => {
    const response = await register({ redirect_uris: ['http://localhost/callback'], grant_types: ['authorization_code'] });
    expect(response.status).toBe(201);
    expect(response.body.grant_types).toEqual(['authorization_code']);
  });

  it('accepts 10 redirect URIs of 2048 characters and a 256-character name', async () => {
    const uris = Array.from({ length: 10 }, (_, i) => `https://app.example.com/${String(i)}${'a'.repeat(2048 - 25)}`);
    expect(uris[0]).toHaveLength(2048);
    const response = await register({ client_name: 'n'.repeat(256), redirect_uris: uris });
    expect(response.status).toBe(201);
  });

  it.each([
    ['no redirect_uris', { client_name: 'x' }],
    ['an empty redirect_uris', { redirect_uris: [] }],
    ['11 redirect URIs', { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example.com/${i}`) }],
    ['a redirect URI of 2049 characters', { redirect_uris: [`https://app.example.com/${'a'.repeat(2049 - 24)}`] }],
    ['redirect_uris as a string', { redirect_uris: 'https://app.example.com/cb' }],
    ['a non-string redirect URI', { redirect_uris: [42] }],
    ['a javascript: URI', { redirect_uris: ['javascript:alert(1)'] }],
    ['a data: URI', { redirect_uris: ['data:text/html,x'] }],
    ['a file: URI', { redirect_uris: ['file:///etc/passwd'] }],
    ['a fragment', { redirect_uris: ['https://app.example.com/cb#x'] }],
    ['userinfo', { redirect_uris: ['https://user@app.example.com/cb'] }],
    ['http on a public host', { redirect_uris: ['http://app.example.com/cb'] }],
    ['one bad URI among good ones', { redirect_uris: ['https://app.example.com/cb', 'http://evil.com/cb'] }],
  ])('refuses %s with invalid_redirect_uri', async (_case, body) => {
    const response = await register(body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'invalid_redirect_uri', error_description: expect.any(String) });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it.each([
    ['a 257-character client_name', { client_name: 'n'.repeat(257) }],
    ['a non-string client_name', { client_name: 7 }],
    ['the implicit grant', { grant_types: ['authorization_code', 'implicit'] }],
    ['client credentials', { grant_types: ['client_credentials'] }],
    ['refresh without authorization_code', { grant_types: ['refresh_token'] }],
    ['a token response type', { response_types: ['token'] }],
    ['two response types', { response_types: ['code', 'token'] }],
    ['a non-string scope', { scope: ['service:ask'] }],
  ])('refuses %s with invalid_client_metadata', async (_case, extra) => {
    const response = await register({ redirect_uris: ['http://localhost/callback'], ...extra });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'invalid_client_metadata', error_description: expect.any(String) });
  });

  it('refuses a body that is not a JSON object', async () => {
    expect((await register([])).body.error).toBe('invalid_client_metadata');
    const malformed = await org.request('POST', '/oauth/register', { body: '{"redirect_uris":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBe('invalid_client_metadata');
    const form = await org.request('POST', '/oauth/register', { form: { redirect_uris: 'http://localhost/callback' } });
    expect(form.status).toBe(400);
    expect(form.body.error).toBe('invalid_client_metadata');
  });
});
