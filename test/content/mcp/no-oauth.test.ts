/**
 * The content MCP server says what it wants (DESIGN 3): its bearer token is the content API secret, and it
 * does not look like an OAuth server, so a client that tries OAuth anyway (as the MCP Inspector does on a
 * 401) ends with an error naming the secret instead of "no route for POST /register".
 */
import { auth } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/databases.js';
import { startContent, type TestContent } from '../../helpers/content.js';
import { TestOAuthProvider } from '../../helpers/sdk-oauth.js';
import { ACCEPT_BOTH, initializeMessage } from '../../helpers/content-mcp-client.js';

const NAMES_THE_SECRET = /send the content API secret as the bearer token, `Authorization: Bearer <secret>` \(CONTENT_API_SECRET, or when the service generated it, the file secrets\/content-api-secret in its data directory\)/;

describe.each(engines)('the content MCP server without the secret on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    content = await startContent(engine);
  });
  afterAll(() => content.close());

  it.each([
    ['no Authorization header', {}],
    ['a wrong secret', { authorization: 'Bearer wrong-secret-0123456789' }],
  ])('answers %s with 401 naming the content API secret, and no OAuth resource metadata', async (_label, authorization) => {
    const response = await fetch(`${content.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...authorization },
      body: JSON.stringify(initializeMessage()),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('unauthorized');
    expect(body.error.message).toMatch(NAMES_THE_SECRET);
  });

  it.each([
    ['GET', '/.well-known/oauth-protected-resource/mcp'],
    ['GET', '/.well-known/oauth-protected-resource'],
    ['GET', '/.well-known/oauth-authorization-server'],
    ['GET', '/.well-known/openid-configuration'],
    ['POST', '/register'],
    ['GET', '/authorize'],
    ['POST', '/token'],
  ])('answers %s %s with a JSON 404 naming the secret', async (method, path) => {
    const response = await fetch(`${content.url}${path}?x=1`, { method, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('not_found');
    expect(body.error.message).toMatch(new RegExp(`^no route for ${method} ${path.replaceAll('.', '\\.')}: the content service takes no OAuth; `));
    expect(body.error.message).toMatch(NAMES_THE_SECRET);
  });

  it('leaves an SDK client trying OAuth (as the MCP Inspector does) with an error naming the secret', async () => {
    const provider = new TestOAuthProvider('http://127.0.0.1:9/callback', 'Inspector stand-in');
    const failure = await auth(provider, { serverUrl: new URL(`${content.url}/mcp`) }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(NAMES_THE_SECRET);
    expect(provider.authorizationUrl).toBeUndefined();
  });
});
