/**
 * End to end, as a person and an MCP client meet in real life: the MCP SDK client (its own OAuth flow:
 * discovery from the 401, registration or a client ID metadata document, PKCE, resource) sends the person
 * to authorize; a real headless Chromium signs in with Email and Password and answers the consent page;
 * the client then calls service_context.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCOPE_NAMES, SCOPES } from '../../src/auth/scopes.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { postMcp, initializeMessage } from '../helpers/oauth-flow.js';
import { openBrowser, signInAs, startCallbackServer, TestOAuthProvider, type PersonBrowser } from '../helpers/sdk-oauth.js';

describe.each(engines)('an MCP client connecting through OAuth with a real browser on %s', (engine) => {
  let org: TestOrg;
  let callback: Awaited<ReturnType<typeof startCallbackServer>>;
  let documents: http.Server;
  let documentsUrl: string;
  let browser: PersonBrowser;

  beforeAll(async () => {
    org = await startOrg(engine, { config: { cimdAllowLoopback: true } });
    callback = await startCallbackServer();
    // Client ID metadata documents, served on loopback as a client's own web site would serve them.
    documents = http.createServer((request, response) => {
      const clientId = `${documentsUrl}${request.url}`;
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          client_id: clientId,
          client_name: 'Metadata Document App',
          redirect_uris: [callback.redirectUrl],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentsUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await callback?.close();
    await new Promise((resolve) => documents?.close(resolve));
    await org?.close();
  });
  beforeEach(async () => {
    browser = await openBrowser();
  });
  afterEach(() => browser.close());

  function mcpTransport(provider: TestOAuthProvider) {
    return new StreamableHTTPClientTransport(new URL(`${org.url}/mcp`), { authProvider: provider });
  }

  /** The client's first connection: discovery from the 401, then the person is sent to authorize. */
  async function startConnecting(provider: TestOAuthProvider) {
    const transport = mcpTransport(provider);
    const error = await new Client({ name: 'e2e-client', version: '1.0.0' }).connect(transport).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl).toBeDefined();
    return transport;
  }

  /** The person opens the authorization URL, signs in, and lands on the consent page. */
  async function reachConsent(provider: TestOAuthProvider) {
    const { page } = browser;
    await page.goto(provider.authorizationUrl!.href);
    expect(new URL(page.url()).pathname).toBe('/signin');
    expect(new URL(page.url()).searchParams.get('return_to')).toMatch(/^\/consent\?request=/);
    await signInAs(page, OWNER.email, OWNER.password);
    await page.waitForURL((url) => url.pathname === '/consent');
    return page;
  }

  async function allowAndFinish(provider: TestOAuthProvider, transport: StreamableHTTPClientTransport) {
    const answered = callback.next();
    await browser.page.getByRole('button', { name: 'Allow' }).click();
    const params = await answered;
    // The SDK leaves state to the application (RFC 6749 §10.12).
    expect(params.get('state')).toBe(provider.expectedState);
    expect(params.get('iss')).toBe(org.config.authPublicUrl);
    await transport.finishAuth(params);
  }

  async function callServiceContext(provider: TestOAuthProvider) {
    const client = new Client({ name: 'e2e-client', version: '1.0.0' });
    await client.connect(mcpTransport(provider));
    expect(client.getServerVersion()?.name).toBe('atrium-org');
    const result = await client.callTool({ name: 'service_context', arguments: {} });
    await client.close();
    expect(result.isError).toBeFalsy();
    return JSON.parse((result.content as Array<{ type: 'text'; text: string }>)[0].text);
  }

  it('registers, signs the person in, shows each requested scope, and after Allow the client calls service_context', async () => {
    const provider = new TestOAuthProvider(callback.redirectUrl, 'Registered Test App');
    const transport = await startConnecting(provider);
    expect(provider.authorizationUrl!.searchParams.get('resource')).toBe(`${org.url}/mcp`);
    expect(provider.authorizationUrl!.searchParams.get('code_challenge_method')).toBe('S256');

    const page = await reachConsent(provider);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Allow Registered Test App to act for you?');
    expect(await page.locator('main').textContent()).toContain(new URL(callback.redirectUrl).host);
    const requested = provider.authorizationUrl!.searchParams.get('scope')!.split(' ');
    expect(requested.sort()).toEqual([...SCOPE_NAMES].sort());
    // Each scope a checkbox labelled with its meaning; the consequential two start unticked.
    for (const scope of SCOPE_NAMES) {
      const box = page.getByRole('checkbox', { name: `${scope}: ${SCOPES[scope]}` });
      await expect(box.isChecked()).resolves.toBe(!['integrations:act', 'governance:admin'].includes(scope));
    }
    // The person ticks integrations:act too, and leaves governance:admin unticked.
    await page.getByRole('checkbox', { name: /^integrations:act/ }).check();

    await allowAndFinish(provider, transport);
    expect(provider.tokens()!.scope!.split(' ').sort()).toEqual(SCOPE_NAMES.filter((scope) => scope !== 'governance:admin').sort());
    const context = await callServiceContext(provider);
    expect(context.person).toMatchObject({ email: OWNER.email, role: 'owner' });
    expect(context.spaces).toEqual([expect.objectContaining({ name: 'General' })]);
    expect(context.scopes).toEqual(SCOPE_NAMES.filter((scope) => scope !== 'governance:admin'));
  });

  it('connects with a client ID metadata document instead of registering', async () => {
    const clientIdUrl = `${documentsUrl}/clients/app.json`;
    const provider = new TestOAuthProvider(callback.redirectUrl, 'ignored', clientIdUrl);
    const transport = await startConnecting(provider);
    expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(clientIdUrl);

    const page = await reachConsent(provider);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('Metadata Document App');
    await allowAndFinish(provider, transport);
    const context = await callServiceContext(provider);
    expect(context.person.email).toBe(OWNER.email);
    expect(context.client.client_id).toBe(clientIdUrl);
  });

  it('lets the person deny: the client gets access_denied with its state and no code', async () => {
    const provider = new TestOAuthProvider(callback.redirectUrl, 'Denied Test App');
    await startConnecting(provider);
    await reachConsent(provider);
    const answered = callback.next();
    await browser.page.getByRole('button', { name: 'Deny' }).click();
    const params = await answered;
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('state')).toBe(provider.expectedState);
    expect(params.get('code')).toBeNull();
  });

  it('Disconnect on /connections revokes the client: its token then answers 401', async () => {
    const provider = new TestOAuthProvider(callback.redirectUrl, 'Disconnected Test App');
    const transport = await startConnecting(provider);
    await reachConsent(provider);
    await allowAndFinish(provider, transport);
    await callServiceContext(provider);
    const accessToken = provider.tokens()!.access_token;

    const { page } = browser;
    await page.goto(`${org.url}/connections`);
    const row = page.getByRole('row').filter({ hasText: 'Disconnected Test App' });
    expect(await row.textContent()).toContain('memory:read');
    expect(await row.textContent()).not.toContain('governance:admin');
    await row.getByRole('button', { name: 'Disconnect' }).click();
    await page.waitForURL((url) => url.pathname === '/connections');
    expect(await page.getByRole('row').filter({ hasText: 'Disconnected Test App' }).count()).toBe(0);

    const refused = await postMcp(org, initializeMessage, { authorization: `Bearer ${accessToken}` });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('resource_metadata=');
    // The refresh token went with it: the SDK client cannot reconnect without the person.
    await expect(new Client({ name: 'e2e-client', version: '1.0.0' }).connect(mcpTransport(provider))).rejects.toThrow(
      'the refresh token was revoked',
    );
  });
});
