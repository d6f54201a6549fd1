/**
 * Connects a client through the real OAuth flow over plain HTTP, the way a browser would walk it:
 * register, authorize (→ /consent → /signin), sign in, Allow, and exchange the code with PKCE. For tests
 * that need a real token but are about something else (the MCP endpoint's refusals, /connections).
 * The browser-driven flow with the SDK's own OAuth client is in oauth-sdk-e2e.test.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { OWNER, type TestOrg } from './org.js';
import { Browserless } from './web-client.js';

export const REDIRECT_URI = 'http://127.0.0.1/callback';

export interface ConnectedClient {
  clientId: string;
  accessToken: string;
  refreshToken: string;
  scope: string;
}

export interface ConnectOptions {
  scopes?: string[];
  /** The scopes the person leaves ticked on the consent page; default every one asked for. */
  tick?: string[];
  clientName?: string;
  /** Signs in as this person (default: the owner); reuses the browser's session when already signed in. */
  browser?: Browserless;
  email?: string;
  password?: string;
}

export async function registerClient(org: TestOrg, clientName = 'Test client'): Promise<string> {
  const response = await org.request('POST', '/oauth/register', { json: { client_name: clientName, redirect_uris: [REDIRECT_URI] } });
  if (response.status !== 201) throw new Error(`registration failed: ${response.status} ${response.text}`);
  return response.body.client_id;
}

/** Starts an authorization and returns the consent page's path (`/consent?request=…`) and the PKCE verifier. */
export async function startAuthorization(org: TestOrg, clientId: string, scopes: string[]) {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(8).toString('hex');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
    resource: `${org.config.publicUrl}/mcp`,
    scope: scopes.join(' '),
  });
  const response = await fetch(`${org.url}/oauth/authorize?${query}`, { redirect: 'manual' });
  if (response.status !== 302) throw new Error(`authorize failed: ${response.status} ${await response.text()}`);
  const location = new URL(response.headers.get('location')!, org.url);
  return { consentPath: location.pathname + location.search, verifier, state };
}

export async function connectClient(org: TestOrg, options: ConnectOptions = {}): Promise<ConnectedClient> {
  const clientId = await registerClient(org, options.clientName);
  const { consentPath, verifier, state } = await startAuthorization(org, clientId, options.scopes ?? []);
  const browser = options.browser ?? new Browserless(org.url);
  let consent = await browser.get(consentPath);
  if (consent.status === 303) {
    await browser.signIn(options.email ?? OWNER.email, options.password ?? OWNER.password, consentPath);
    consent = await browser.get(consentPath);
  }
  if (consent.status !== 200) throw new Error(`consent page: ${consent.status}`);
  const answer = await browser.post('/consent', {
    csrf: browser.hidden(consent.text, 'csrf'),
    request: browser.hidden(consent.text, 'request'),
    // The person ticks every scope asked for, or only `tick` when the test says so.
    scope: options.tick ?? options.scopes ?? [],
    decision: 'allow',
  });
  const callback = new URL(answer.headers.get('location')!);
  if (callback.searchParams.get('state') !== state) throw new Error('state changed');
  const token = await org.request('POST', '/oauth/token', {
    form: {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource: `${org.config.publicUrl}/mcp`,
    },
  });
  if (token.status !== 200) throw new Error(`token exchange failed: ${token.status} ${token.text}`);
  return { clientId, accessToken: token.body.access_token, refreshToken: token.body.refresh_token, scope: token.body.scope };
}

/** A JSON-RPC POST to the org MCP endpoint. */
export async function postMcp(org: TestOrg, body: unknown, headers: Record<string, string> = {}, path = '/mcp') {
  const response = await fetch(org.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export const initializeMessage = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1.0.0' } },
};

/** initialize + initialized; returns the headers later requests carry. */
export async function openMcpSession(org: TestOrg, accessToken: string): Promise<Record<string, string>> {
  const auth = { authorization: `Bearer ${accessToken}` };
  const init = await postMcp(org, initializeMessage, auth);
  if (init.status !== 200) throw new Error(`initialize failed: ${init.status} ${init.text}`);
  const headers = { ...auth, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
  await postMcp(org, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return headers;
}
