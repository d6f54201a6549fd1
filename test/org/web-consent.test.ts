/**
 * The consent and connections pages over plain HTTP: sign-in required, CSRF, escaping, framing headers,
 * and that a refused form changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient, registerClient, startAuthorization } from '../helpers/oauth-flow.js';
import { Browserless } from '../helpers/web-client.js';

describe.each(engines)('consent and connections pages on %s', (engine) => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await startOrg(engine);
  });
  afterAll(() => org.close());

  async function pendingConsent(scopes = ['memory:read', 'task:write'], clientName = 'Consent Test App') {
    const clientId = await registerClient(org, clientName);
    return startAuthorization(org, clientId, scopes);
  }

  async function signedIn(): Promise<Browserless> {
    const browser = new Browserless(org.url);
    expect((await browser.signIn(OWNER.email, OWNER.password)).status).toBe(303);
    return browser;
  }

  it('sends a person who is not signed in to /signin, keeping where to come back', async () => {
    const { consentPath } = await pendingConsent();
    const response = await new Browserless(org.url).get(consentPath);
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location')!, org.url);
    expect(location.pathname).toBe('/signin');
    expect(location.searchParams.get('return_to')).toBe(consentPath);
    expect((await new Browserless(org.url).get('/connections')).headers.get('location')).toBe('/signin?return_to=%2Fconnections');
  });

  it('shows the client name, the redirect host, each requested scope with its meaning, Allow and Deny', async () => {
    const { consentPath } = await pendingConsent();
    const page = await (await signedIn()).get(consentPath);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Allow Consent Test App to act for you?</h1>');
    expect(page.text).toContain('<strong>127.0.0.1</strong>');
    expect(page.text).toMatch(/<input type="checkbox" id="scope-memory:read" name="scope" value="memory:read" checked\/>\s*<label class="inline" for="scope-memory:read"><code>memory:read<\/code>: Search and read company memory, with provenance<\/label>/);
    expect(page.text).toContain('<code>task:write</code>: Create, answer, and cancel tracked work');
    expect(page.text).not.toContain('governance:admin');
    expect(page.text).toContain('<button type="submit" name="decision" value="allow">Allow</button>');
    expect(page.text).toContain('<button type="submit" name="decision" value="deny">Deny</button>');
  });

  it('offers integrations:act and governance:admin unticked, each with a plain warning', async () => {
    const { consentPath } = await pendingConsent(['memory:read', 'integrations:act', 'governance:admin']);
    const page = await (await signedIn()).get(consentPath);
    for (const scope of ['integrations:act', 'governance:admin']) {
      const box = new RegExp(`<input type="checkbox" id="scope-${scope}" name="scope" value="${scope}"( checked)? aria-describedby="warn-${scope}"/>`).exec(page.text);
      expect(box, scope).not.toBeNull();
      expect(box![1], `${scope} starts unticked`).toBeUndefined();
      expect(page.text).toMatch(new RegExp(`<small id="warn-${scope}" class="warning">Warning: lets the application`));
    }
    expect(page.text).toContain('value="memory:read" checked/>');
  });

  it('issues a token holding only the ticked scopes, says so in the token response, and refuses the rest', async () => {
    const asked = ['memory:read', 'task:read', 'integrations:read', 'integrations:act', 'governance:admin'];
    const connected = await connectClient(org, { scopes: asked, tick: ['memory:read', 'integrations:read'] });
    expect(connected.scope?.split(' ').sort()).toEqual(['integrations:read', 'memory:read']);
    const call = (name: string) =>
      fetch(`${org.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${connected.accessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
      });
    const refused = await call('list_decisions');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('insufficient_scope');
    // Leaving everything unticked grants nothing beyond who the person is.
    const nothing = await connectClient(org, { scopes: asked, tick: [] });
    expect(nothing.scope ?? '').toBe('');
  });

  it('escapes what clients choose, such as their name', async () => {
    const { consentPath } = await pendingConsent([], '<script>alert("x")</script>');
    const page = await (await signedIn()).get(consentPath);
    expect(page.text).not.toContain('<script>');
    expect(page.text).toContain('&lt;script>alert(&quot;x&quot;)&lt;/script>');
  });

  it.each([
    ['a right-to-left override', 'Evil\u202Eppa.lanigirO', 'Evilppa.lanigirO'],
    ['isolates', '\u2066Trusted\u2069 App\u2067', 'Trusted App'],
    ['marks and embeddings', '\u200FSafe\u200E \u202AApp\u202C\u061C', 'Safe App'],
  ])('strips bidirectional controls (%s) from client names on consent and connections', async (_case, clientName, shown) => {
    const browser = await signedIn();
    const { consentPath } = await pendingConsent([], clientName);
    const consent = await browser.get(consentPath);
    expect(consent.text).toContain(`<h1>Allow ${shown} to act for you?</h1>`);
    await connectClient(org, { browser, clientName, scopes: ['task:read'] });
    const connections = await browser.get('/connections');
    expect(connections.text).toMatch(new RegExp(`">${shown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</label>`));
    expect([consent.text, connections.text].join('')).not.toMatch(/[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/);
  });

  it('forbids framing on the consent and connections pages', async () => {
    const browser = await signedIn();
    const { consentPath } = await pendingConsent();
    for (const path of [consentPath, '/connections']) {
      const page = await browser.get(path);
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
  });

  it('answers 403 to a consent form without a CSRF token or with a wrong one, and nothing changes', async () => {
    const { consentPath } = await pendingConsent();
    const browser = await signedIn();
    const page = await browser.get(consentPath);
    const request = browser.hidden(page.text, 'request');

    for (const csrf of [undefined, 'forged-token', browser.hidden(page.text, 'csrf').slice(1) + 'A']) {
      const form: Record<string, string> = { request, decision: 'allow' };
      if (csrf !== undefined) form.csrf = csrf;
      const refused = await browser.post('/consent', form);
      expect(refused.status).toBe(403);
      expect(refused.headers.get('location')).toBeNull();
    }
    // The request is still pending and can be answered properly.
    const again = await browser.get(consentPath);
    expect(again.status).toBe(200);
    const answered = await browser.post('/consent', { request, decision: 'deny', csrf: browser.hidden(again.text, 'csrf') });
    expect(answered.status).toBe(303);
    expect(new URL(answered.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
  });

  it('answers an unknown or already answered request with 400 and no redirect', async () => {
    const browser = await signedIn();
    expect((await browser.get('/consent?request=nope')).status).toBe(400);
    const { consentPath } = await pendingConsent();
    const page = await browser.get(consentPath);
    const form = { request: browser.hidden(page.text, 'request'), csrf: browser.hidden(page.text, 'csrf'), decision: 'allow' };
    expect((await browser.post('/consent', form)).status).toBe(303);
    const replay = await browser.post('/consent', form);
    expect(replay.status).toBe(400);
    expect(replay.headers.get('location')).toBeNull();
  });

  it('lists connected clients with their scopes; Disconnect needs the CSRF token', async () => {
    const browser = await signedIn();
    const { accessToken } = await connectClient(org, { browser, clientName: 'Listed App', scopes: ['task:read'] });
    const page = await browser.get('/connections');
    expect(page.text).toMatch(/<label class="inline" for="pick-[^"]+">Listed App<\/label>\s*<br\/><small>application; client id <code>[^<]+<\/code>; returns to 127\.0\.0\.1<\/small>/);
    expect(page.text).toContain('<li>task:read</li>');
    const clientIds = [...page.text.matchAll(/name="client_id" value="([^"]+)"/g)].map((match) => match[1]);
    const forged = await browser.post('/connections/disconnect', { client_id: clientIds[0] });
    expect(forged.status).toBe(403);
    const auth = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json' };
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    const mcp = await fetch(`${org.url}/mcp`, { method: 'POST', headers: auth, body: init });
    expect(mcp.status).toBe(200);
    // Authenticated MCP answers, like every org answer, are never stored by a cache.
    expect(mcp.headers.get('cache-control')).toBe('no-store');
    await mcp.text();
  });

  it('tells apart an application named like a declared agent, and disconnects several at once', async () => {
    const browser = await signedIn();
    // The assistant is an agent of every organization: an application calling itself "Assistant" is not it.
    const first = await connectClient(org, { browser, clientName: 'Assistant', scopes: ['task:read'] });
    const second = await connectClient(org, { browser, clientName: 'Second App', scopes: ['task:read'] });
    const kept = await connectClient(org, { browser, clientName: 'Kept App', scopes: ['task:read'] });
    const page = await browser.get('/connections');
    expect(page.text).toMatch(/>Assistant<\/label>\s*<br\/><small>application, <strong>not the organization's agent of that name<\/strong>; client id <code>/);
    const answered = await browser.post('/connections/disconnect', {
      csrf: browser.hidden(page.text, 'csrf'),
      client_id: [first.clientId, second.clientId],
      selected: '1',
    });
    expect(answered.status).toBe(303);
    const after = (await browser.get('/connections')).text;
    expect(after).not.toContain(first.clientId);
    expect(after).not.toContain(second.clientId);
    expect(after).toContain(kept.clientId);
    const call = (token: string) =>
      fetch(`${org.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
      });
    expect((await call(first.accessToken)).status).toBe(401);
    expect((await call(second.accessToken)).status).toBe(401);
    expect((await call(kept.accessToken)).status).toBe(200);
  });

  it.each(['/health', '/oauth/token', '/connections', '/no-such-page'])('answers %s with Cache-Control: no-store', async (route) => {
    const response = await org.request(route === '/oauth/token' ? 'POST' : 'GET', route);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});
