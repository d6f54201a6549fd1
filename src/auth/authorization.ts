/**
 * The authorization endpoint (RFC 6749 §4.1.1, OAuth 2.1 §4.1.1, spec 4.1) and the consent outcome.
 *
 * GET /oauth/authorize validates the request as a pipeline of checks. Until the client and its redirect
 * URI are known good, a failure is shown to the person and never redirected (RFC 6749 §4.1.2.1: an
 * open redirector otherwise); after that, failures go back to the client as error redirects carrying
 * `state` and `iss`. A valid request is stored and the person is sent to the consent page, which calls
 * `approveAuthorizationRequest` or `denyAuthorizationRequest`.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { AuthContext } from './context.js';
import type { Queryable } from '../platform/database.js';
import { toIso } from '../platform/time.js';
import { clientDisplayName, findClient, storedClientName } from './clients.js';
import { AccessDenied, InvalidRequest, isOAuthError, UnsupportedResponseType, type OAuthError } from './errors.js';
import { createGrant } from './grants.js';
import { hashToken, PREFIX, randomToken } from './ids.js';
import { LIFETIME } from './lifetimes.js';
import { optionalParam, requiredParam, type RawParams } from './params.js';
import { checkCodeChallenge } from './pkce.js';
import { matchRedirectUri } from './redirect-uri.js';
import { checkResource } from './resource.js';
import { oauthAuthorizationRequests, oauthClients, oauthCodes } from './schema.js';
import { parseScope } from './scopes.js';
import { expiresIn } from './tokens.js';

/** Where GET /oauth/authorize sends the browser: the consent page, or back to the client with an error. */
export interface AuthorizeOutcome {
  location: string;
}

/**
 * Runs the checks of one authorization request. Throws (InvalidClient, InvalidRedirectUri, InvalidRequest)
 * only while the redirect URI is not yet trusted; the route shows those to the person.
 */
export async function startAuthorization(ctx: AuthContext, params: RawParams, address?: string): Promise<AuthorizeOutcome> {
  // RFC 6749 §4.1.1: the client must be known (registered, or a metadata document URL).
  const client = await findClient(ctx, requiredParam(params, 'client_id'), address);

  // Spec 4.1 rules 1–4. Required even with one registered URI, as spec 4.1 lists it in the query.
  const redirectUri = requiredParam(params, 'redirect_uri');
  matchRedirectUri(client.redirectUris, redirectUri);

  // RFC 6749 §4.1.2: state comes back exactly as sent; a repeated state cannot be echoed, so it is dropped.
  const state = typeof params.state === 'string' && params.state !== '' ? params.state : undefined;
  try {
    // RFC 6749 §3.1: no repeated parameters (state is read above).
    optionalParam(params, 'state');

    // Spec 2.5: the code flow only.
    const responseType = requiredParam(params, 'response_type');
    if (responseType !== 'code') throw new UnsupportedResponseType('response_type must be code');

    // Spec 5.1: PKCE with S256, required.
    const codeChallenge = checkCodeChallenge(optionalParam(params, 'code_challenge'), optionalParam(params, 'code_challenge_method'));

    // RFC 8707 and spec 5.1: the resource is our MCP endpoint.
    const resource = checkResource(ctx.config, optionalParam(params, 'resource'));

    // Spec 2.3: a subset of the nine scopes.
    const scopes = parseScope(optionalParam(params, 'scope'));

    const id = randomToken(PREFIX.request);
    await ctx.db.insert(oauthAuthorizationRequests).values({
      id,
      clientId: client.id,
      redirectUri,
      state,
      codeChallenge,
      scopes,
      resource,
      expiresAt: expiresIn(LIFETIME.authorizationRequest),
    });
    return { location: `/consent?request=${encodeURIComponent(id)}` };
  } catch (error) {
    if (!isOAuthError(error)) throw error;
    return { location: errorRedirect(ctx, redirectUri, error, state) };
  }
}

/** A pending request as the consent page shows it. */
export interface PendingAuthorization {
  id: string;
  clientId: string;
  clientName: string;
  redirectHost: string;
  scopes: string[];
  resource: string;
  expiresAt: string;
}

/** The pending request with this id, or null when unknown, expired or already answered. */
export async function getAuthorizationRequest(ctx: AuthContext, id: string): Promise<PendingAuthorization | null> {
  const [row] = await ctx.db
    .select({ request: oauthAuthorizationRequests, client: { id: oauthClients.id, kind: oauthClients.kind, name: oauthClients.name } })
    .from(oauthAuthorizationRequests)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthAuthorizationRequests.clientId))
    .where(and(eq(oauthAuthorizationRequests.id, id), isNull(oauthAuthorizationRequests.answeredAt), sql`${oauthAuthorizationRequests.expiresAt} > now()`));
  if (!row) return null;
  return {
    id: row.request.id,
    clientId: row.client.id,
    clientName: clientDisplayName(row.client),
    redirectHost: new URL(row.request.redirectUri).host,
    scopes: row.request.scopes,
    resource: row.request.resource,
    expiresAt: toIso(row.request.expiresAt),
  };
}

/**
 * The person allowed the request: records the grant, issues a single-use code (60 s) and returns the
 * redirect carrying `code`, the unchanged `state`, and `iss` (RFC 9207). Throws InvalidRequest when the
 * request is unknown, expired or already answered.
 */
export async function approveAuthorizationRequest(ctx: AuthContext, id: string, personId: string, granted?: readonly string[]): Promise<string> {
  return ctx.db.transaction(async (tx) => {
    const request = await answerRequest(tx, id);
    // The person may grant less than was asked (RFC 6749 §3.3): the token response's `scope` then says so.
    const scopes = granted ? request.scopes.filter((scope) => granted.includes(scope)) : request.scopes;
    const grantId = await createGrant(tx, { personId, clientId: request.clientId, scopes, resource: request.resource });
    await ctx.recordAuthEvent?.(tx, { kind: 'consent.granted', personId, clientId: request.clientId, clientName: request.clientName, scopes, requested: request.scopes });
    const code = randomToken(PREFIX.code);
    await tx.insert(oauthCodes).values({
      hash: hashToken(code),
      grantId,
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      scopes,
      resource: request.resource,
      expiresAt: expiresIn(LIFETIME.code),
    });
    return redirectWith(request.redirectUri, { code, state: request.state ?? undefined, iss: ctx.config.authPublicUrl });
  });
}

/** The person denied the request: the redirect carries `access_denied` (RFC 6749 §4.1.2.1). */
export async function denyAuthorizationRequest(ctx: AuthContext, id: string, personId: string): Promise<string> {
  const request = await ctx.db.transaction(async (tx) => {
    const answered = await answerRequest(tx, id);
    await ctx.recordAuthEvent?.(tx, { kind: 'consent.denied', personId, clientId: answered.clientId, clientName: answered.clientName, requested: answered.scopes });
    return answered;
  });
  return errorRedirect(ctx, request.redirectUri, new AccessDenied('the person denied the request'), request.state ?? undefined);
}

/** A request is answered once: the conditional update lets exactly one answer win. */
async function answerRequest(db: Queryable, id: string) {
  const [request] = await db
    .update(oauthAuthorizationRequests)
    .set({ answeredAt: sql`now()` })
    .where(and(eq(oauthAuthorizationRequests.id, id), isNull(oauthAuthorizationRequests.answeredAt), sql`${oauthAuthorizationRequests.expiresAt} > now()`))
    .returning();
  if (!request) throw new InvalidRequest('the authorization request is unknown, expired or already answered');
  return { ...request, clientName: await storedClientName(db, request.clientId) };
}

/** RFC 6749 §4.1.2.1 with `iss` (RFC 9207 §2). */
function errorRedirect(ctx: AuthContext, redirectUri: string, error: OAuthError, state: string | undefined): string {
  return redirectWith(redirectUri, {
    error: error.code,
    error_description: error.message,
    state,
    iss: ctx.config.authPublicUrl,
  });
}

/** Appends parameters to the client's redirect URI, leaving its own query exactly as registered. */
function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const separator = !redirectUri.includes('?') ? '?' : redirectUri.endsWith('?') ? '' : '&';
  return redirectUri + separator + query.toString();
}
