import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateSigningKey } from '../../src/auth/jwks.js';
import { resourceMetadataUrl } from '../../src/auth/resource.js';
import { SCOPE_NAMES } from '../../src/auth/scopes.js';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';

describe.each(engines)('discovery documents on %s', (engine) => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await startOrg(engine);
  });
  afterAll(() => org.close());

  it('serves the authorization server metadata of spec 2.5 with the issuer equal to its origin', async () => {
    const response = await org.request('GET', '/.well-known/oauth-authorization-server');
    expect(response.status).toBe(200);
    const issuer = org.url;
    expect(response.body).toEqual({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      jwks_uri: `${issuer}/oauth/jwks`,
      scopes_supported: SCOPE_NAMES,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('serves the protected resource metadata of spec 2.4 on the MCP host', async () => {
    const response = await org.request('GET', '/.well-known/oauth-protected-resource/mcp');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      resource: `${org.url}/mcp`,
      authorization_servers: [org.url],
      scopes_supported: SCOPE_NAMES,
      bearer_methods_supported: ['header'],
    });
    expect(resourceMetadataUrl(org.config)).toBe(`${org.url}/.well-known/oauth-protected-resource/mcp`);
  });

  it('lets browser-based clients call registration, token and revocation across origins', async () => {
    for (const path of ['/oauth/register', '/oauth/token', '/oauth/revoke']) {
      const preflight = await org.request('OPTIONS', path, {
        headers: { origin: 'https://inspector.example.com', 'access-control-request-method': 'POST' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
    }
    const authorize = await org.request('GET', '/oauth/authorize');
    expect(authorize.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('publishes the current and previous signing keys in the JWKS', async () => {
    const first = await org.request('GET', '/oauth/jwks');
    expect(first.status).toBe(200);
    expect(first.body.keys).toHaveLength(1);
    const [current] = first.body.keys;
    expect(current).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(current).not.toHaveProperty('d');

    await rotateSigningKey(org.service.ctx.db);
    const rotated = await org.request('GET', '/oauth/jwks');
    expect(rotated.body.keys).toHaveLength(2);
    expect(rotated.body.keys[1].kid).toBe(current.kid);
    expect(rotated.body.keys[0].kid).not.toBe(current.kid);
  });
});

describe('an authorization server on its own origin (AUTH_PUBLIC_URL)', () => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await startOrg(engines[0], { config: { authPublicUrl: 'https://auth.example.com' } });
  });
  afterAll(() => org.close());

  it('names that origin as issuer and as the resource’s authorization server', async () => {
    const metadata = await org.request('GET', '/.well-known/oauth-authorization-server');
    expect(metadata.body.issuer).toBe('https://auth.example.com');
    expect(metadata.body.token_endpoint).toBe('https://auth.example.com/oauth/token');
    const resource = await org.request('GET', '/.well-known/oauth-protected-resource/mcp');
    expect(resource.body.authorization_servers).toEqual(['https://auth.example.com']);
    expect(resource.body.resource).toBe(`${org.url}/mcp`);
  });
});
