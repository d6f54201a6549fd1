/**
 * An OAuth client for the authorization server tests, built on oauth4webapi (an independent client
 * library), plus the one shortcut the protocol tests take: the person's consent is given by calling
 * `approveAuthorizationRequest` directly (the browser flow is tested with the org pages).
 */
import * as oauth from 'oauth4webapi';
import { approveAuthorizationRequest } from '../../src/auth/authorization.js';
import type { TestOrg } from './org.js';

export const PERSON = 'person_under_test';
export const REDIRECT_URI = 'http://127.0.0.1/callback';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

export interface TestClient {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  clientId: string;
  resource: string;
}

/** Discovers the server from its metadata and registers a client (RFC 8414, RFC 7591) through oauth4webapi. */
export async function registerTestClient(org: TestOrg, metadata: Record<string, unknown> = {}): Promise<TestClient> {
  const issuer = new URL(org.config.authPublicUrl);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  const registered = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { client_name: 'Test client', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none', ...metadata },
      insecure,
    ),
  );
  return { as, client: { client_id: registered.client_id }, clientId: registered.client_id, resource: `${org.config.publicUrl}/mcp` };
}

export interface AuthorizeParams {
  clientId: string;
  redirectUri?: string;
  scope?: string;
  resource?: string;
  state?: string;
  codeVerifier?: string;
  /** Extra or overriding query parameters; `null` removes one. */
  query?: Record<string, string | null>;
}

export interface PendingAuthorizeRequest {
  codeVerifier: string;
  state: string;
  redirectUri: string;
  /** The `Location` the authorization endpoint answered with. */
  location: string;
  status: number;
}

/** GET /oauth/authorize with PKCE S256 and a fresh state; returns where the server sent the browser. */
export async function authorize(org: TestOrg, params: AuthorizeParams): Promise<PendingAuthorizeRequest> {
  const codeVerifier = params.codeVerifier ?? oauth.generateRandomCodeVerifier();
  const state = params.state ?? oauth.generateRandomState();
  const redirectUri = params.redirectUri ?? REDIRECT_URI;
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: params.clientId,
    redirect_uri: redirectUri,
    code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    resource: params.resource ?? `${org.config.publicUrl}/mcp`,
    scope: params.scope ?? 'service:ask memory:read',
  });
  for (const [name, value] of Object.entries(params.query ?? {})) {
    if (value === null) query.delete(name);
    else query.set(name, value);
  }
  const response = await org.request('GET', `/oauth/authorize?${query}`);
  return { codeVerifier, state, redirectUri, location: response.headers.get('location') ?? '', status: response.status };
}

/** The consent page's request id from the authorization endpoint's redirect. */
export function consentRequestId(location: string): string {
  const url = new URL(location, 'http://consent.invalid');
  if (url.pathname !== '/consent') throw new Error(`expected a redirect to /consent, got ${location}`);
  return url.searchParams.get('request') ?? '';
}

export interface Approved extends PendingAuthorizeRequest {
  /** The redirect back to the client, with code, state and iss. */
  callback: URL;
  code: string;
}

/** Authorizes and approves as PERSON: the code and everything needed to redeem it. */
export async function authorizeAndApprove(org: TestOrg, params: AuthorizeParams): Promise<Approved> {
  const pending = await authorize(org, params);
  const callback = new URL(await approveAuthorizationRequest(org.service.ctx, consentRequestId(pending.location), PERSON));
  return { ...pending, callback, code: callback.searchParams.get('code') ?? '' };
}

/** Redeems an approved code through oauth4webapi, validating the authorization response first. */
export async function redeemCode(tc: TestClient, approved: Approved, resource = tc.resource): Promise<oauth.TokenEndpointResponse> {
  const params = oauth.validateAuthResponse(tc.as, tc.client, approved.callback, approved.state);
  const response = await oauth.authorizationCodeGrantRequest(tc.as, tc.client, oauth.None(), params, approved.redirectUri, approved.codeVerifier, {
    additionalParameters: { resource },
    ...insecure,
  });
  return oauth.processAuthorizationCodeResponse(tc.as, tc.client, response);
}

/** Registers, authorizes, approves and redeems: a client holding fresh tokens. */
export async function connectedClient(org: TestOrg, scope = 'service:ask memory:read') {
  const tc = await registerTestClient(org);
  const approved = await authorizeAndApprove(org, { clientId: tc.clientId, scope });
  const tokens = await redeemCode(tc, approved);
  return { tc, tokens };
}

export async function refresh(tc: TestClient, refreshToken: string, extra: Record<string, string> = {}) {
  const response = await oauth.refreshTokenGrantRequest(tc.as, tc.client, oauth.None(), refreshToken, {
    additionalParameters: { resource: tc.resource, ...extra },
    ...insecure,
  });
  return oauth.processRefreshTokenResponse(tc.as, tc.client, response);
}

export async function revoke(tc: TestClient, token: string): Promise<void> {
  await oauth.processRevocationResponse(await oauth.revocationRequest(tc.as, tc.client, oauth.None(), token, insecure));
}

/** A raw form POST, for the refusals whose exact status and error code the tests assert. */
export function postForm(org: TestOrg, path: string, form: Record<string, string>) {
  return org.request('POST', path, { form });
}

/** The OAuth error code oauth4webapi surfaced, for `rejects` assertions. */
export function oauthErrorCode(error: unknown): string | undefined {
  return error instanceof oauth.ResponseBodyError ? error.error : undefined;
}
