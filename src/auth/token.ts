/**
 * The token endpoint's two grants (RFC 6749 §4.1.3 and §6, OAuth 2.1 §4.1.3 and §4.3). Each is a pipeline
 * of checks made without consuming anything; only then is the code or refresh token consumed, with a
 * conditional UPDATE … RETURNING in the same transaction that issues the new tokens, so of N parallel
 * presentations exactly one wins. A second presentation of a consumed code or refresh token is treated as
 * theft and revokes the whole grant (DESIGN 4.7) — except a refresh token presented again within the reuse
 * interval after its rotation (`OAUTH_REFRESH_REUSE_SECONDS`), which yields a fresh pair for the same grant,
 * so a client refreshing from two places at once stays signed in.
 */
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { AuthContext } from './context.js';
import type { Client } from './client-metadata.js';
import { findClient } from './clients.js';
import { InvalidGrant, InvalidScope, InvalidTarget, UnauthorizedClient, UnsupportedGrantType } from './errors.js';
import { revokeGrants } from './grants.js';
import { hashToken } from './ids.js';
import { DEFAULT_REFRESH_REUSE_SECONDS } from './lifetimes.js';
import { optionalParam, requiredParam, type RawParams } from './params.js';
import { verifyPkce } from './pkce.js';
import { checkResource } from './resource.js';
import { oauthCodes, oauthGrants, oauthTokens } from './schema.js';
import { parseScope } from './scopes.js';
import { issueTokens, revokingAccess, tokenResponse } from './tokens.js';

type TokenResponse = ReturnType<typeof tokenResponse>;
type GrantHandler = (ctx: AuthContext, client: Client, params: RawParams) => Promise<TokenResponse>;

const grantHandlers: Record<string, GrantHandler> = {
  authorization_code: redeemAuthorizationCode,
  refresh_token: redeemRefreshToken,
};

/** POST /oauth/token: picks the grant, identifies the public client, and runs the grant's pipeline. */
export async function exchangeToken(ctx: AuthContext, params: RawParams, address?: string): Promise<TokenResponse> {
  // RFC 6749 §5.2: authorization_code and refresh_token only (spec 2.5).
  const grantType = requiredParam(params, 'grant_type');
  const handler = Object.hasOwn(grantHandlers, grantType) ? grantHandlers[grantType] : undefined;
  if (!handler) throw new UnsupportedGrantType(`grant_type ${grantType} is not supported`);

  // RFC 6749 §3.2.1: a public client identifies itself with client_id (spec 5.1: auth method none).
  const client = await findClient(ctx, requiredParam(params, 'client_id'), address);

  // RFC 6749 §5.2: only the grant types the client registered.
  if (!client.grantTypes.includes(grantType)) throw new UnauthorizedClient(`the client did not register grant_type ${grantType}`);

  return handler(ctx, client, params);
}

async function redeemAuthorizationCode(ctx: AuthContext, client: Client, params: RawParams): Promise<TokenResponse> {
  const codeHash = hashToken(requiredParam(params, 'code'));
  const redirectUri = requiredParam(params, 'redirect_uri');
  const verifier = requiredParam(params, 'code_verifier');
  const resource = checkResource(ctx.config, optionalParam(params, 'resource'));

  const [code] = await ctx.db
    .select({
      grantId: oauthCodes.grantId,
      clientId: oauthCodes.clientId,
      redirectUri: oauthCodes.redirectUri,
      codeChallenge: oauthCodes.codeChallenge,
      scopes: oauthCodes.scopes,
      resource: oauthCodes.resource,
      personId: oauthGrants.personId,
      used: sql<boolean>`${oauthCodes.usedAt} IS NOT NULL`,
      expired: sql<boolean>`${oauthCodes.expiresAt} <= now()`,
      grantRevoked: sql<boolean>`${oauthGrants.revokedAt} IS NOT NULL`,
    })
    .from(oauthCodes)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthCodes.grantId))
    .where(eq(oauthCodes.hash, codeHash));

  // RFC 6749 §5.2: a code we never issued.
  if (!code) throw new InvalidGrant('the authorization code is unknown');

  // RFC 6749 §4.1.2 and OAuth 2.1 §4.1.3: a code presented twice revokes what it issued.
  if (code.used) return codeReplayed(ctx, code.grantId);

  // DESIGN 4.7: codes live 60 seconds.
  if (code.expired) throw new InvalidGrant('the authorization code has expired');

  // A disconnect between consent and redemption withdraws the code too.
  if (code.grantRevoked) throw new InvalidGrant('the authorization was revoked');

  // RFC 6749 §4.1.3: the code was issued to the client redeeming it.
  if (code.clientId !== client.id) throw new InvalidGrant('the authorization code was issued to another client');

  // RFC 6749 §4.1.3: redirect_uri identical to the authorization request's.
  if (code.redirectUri !== redirectUri) throw new InvalidGrant('redirect_uri does not match the authorization request');

  // RFC 8707 §2: the same resource as the authorization request.
  if (code.resource !== resource) throw new InvalidTarget('resource does not match the authorization request');

  // RFC 7636 §4.6: the verifier matches the challenge.
  verifyPkce(verifier, code.codeChallenge);

  const issued = await ctx.db.transaction(async (tx) => {
    const [won] = await tx
      .update(oauthCodes)
      .set({ usedAt: sql`now()` })
      .where(and(eq(oauthCodes.hash, codeHash), isNull(oauthCodes.usedAt)))
      .returning({ grantId: oauthCodes.grantId });
    if (!won) return null;
    const binding = { grantId: code.grantId, clientId: client.id, personId: code.personId, resource: code.resource };
    return issueTokens(tx, binding, { access: code.scopes, refresh: offersRefresh(client) ? code.scopes : null });
  });
  if (!issued) return codeReplayed(ctx, code.grantId);
  return tokenResponse(issued);
}

async function codeReplayed(ctx: AuthContext, grantId: string): Promise<never> {
  await revokingAccess(ctx, (tx, changed) => revokeGrants(tx, [grantId], changed));
  throw new InvalidGrant('the authorization code was already used; the tokens it issued are revoked');
}

async function redeemRefreshToken(ctx: AuthContext, client: Client, params: RawParams): Promise<TokenResponse> {
  const tokenHash = hashToken(requiredParam(params, 'refresh_token'));
  const requestedScope = optionalParam(params, 'scope');

  const [token] = await ctx.db
    .select({
      grantId: oauthTokens.grantId,
      clientId: oauthTokens.clientId,
      personId: oauthTokens.personId,
      scopes: oauthTokens.scopes,
      resource: oauthTokens.resource,
      used: sql<boolean>`${oauthTokens.usedAt} IS NOT NULL`,
      usedRecently: sql<boolean>`${rotatedRecently(ctx)}`,
      expired: sql<boolean>`${oauthTokens.expiresAt} <= now()`,
      revoked: sql<boolean>`${oauthTokens.revokedAt} IS NOT NULL OR ${oauthGrants.revokedAt} IS NOT NULL`,
    })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(and(eq(oauthTokens.hash, tokenHash), eq(oauthTokens.kind, 'refresh')));

  // RFC 6749 §5.2: a refresh token we never issued.
  if (!token) throw new InvalidGrant('the refresh token is unknown');

  // RFC 6749 §5.2: revoked, by the client, the person, or reuse detection.
  if (token.revoked) throw new InvalidGrant('the refresh token was revoked');

  // RFC 6749 §6: the token was issued to the client presenting it.
  if (token.clientId !== client.id) throw new InvalidGrant('the refresh token was issued to another client');

  // OAuth 2.1 §4.3.1: a rotated refresh token presented again revokes the grant, unless it was rotated
  // within the reuse interval (DESIGN 4.7).
  if (token.used && !token.usedRecently) return refreshReused(ctx, token.grantId);

  // DESIGN 4.7: refresh tokens live 30 days.
  if (token.expired) throw new InvalidGrant('the refresh token has expired');

  // RFC 8707 §2 and spec 5.1: the resource is checked before the token is consumed.
  const resource = checkResource(ctx.config, optionalParam(params, 'resource'));
  if (resource !== token.resource) throw new InvalidTarget('resource does not match the grant');

  // RFC 6749 §6 and spec 5.1: the scope may narrow, never widen; absent means unchanged.
  const scopes = requestedScope === undefined ? token.scopes : parseScope(requestedScope);
  const wider = scopes.filter((scope) => !token.scopes.includes(scope));
  if (wider.length > 0) throw new InvalidScope(`scope exceeds the grant: ${wider.join(' ')}`);

  const issued = await ctx.db.transaction(async (tx) => {
    // Consumes the token, or admits it again within the reuse interval without moving the interval's start.
    // A concurrent refresh with the same token waits for this row and then re-checks the condition against
    // the committed rotation, so both succeed within the interval and neither revokes.
    const [won] = await tx
      .update(oauthTokens)
      .set({ usedAt: sql`coalesce(${oauthTokens.usedAt}, now())` })
      .where(
        and(
          eq(oauthTokens.hash, tokenHash),
          isNull(oauthTokens.revokedAt),
          or(isNull(oauthTokens.usedAt), rotatedRecently(ctx)),
        ),
      )
      .returning({ grantId: oauthTokens.grantId });
    if (!won) return null;
    const binding = { grantId: token.grantId, clientId: client.id, personId: token.personId, resource: token.resource };
    return issueTokens(tx, binding, { access: scopes, refresh: token.scopes });
  });
  if (!issued) return refreshReused(ctx, token.grantId);
  return tokenResponse(issued);
}

/** True for a refresh token rotated less than the reuse interval ago (never when the interval is 0). */
function rotatedRecently(ctx: AuthContext) {
  const seconds = ctx.config.refreshReuseSeconds ?? DEFAULT_REFRESH_REUSE_SECONDS;
  // Not `used_at > now()` for 0: a refresh whose transaction began before the winner's (now() is the start of
  // the transaction) would pass it once the winner commits, and two refreshes would win.
  if (seconds <= 0) return sql`false`;
  return sql`${oauthTokens.usedAt} > now() - make_interval(secs => ${seconds})`;
}

async function refreshReused(ctx: AuthContext, grantId: string): Promise<never> {
  await revokingAccess(ctx, (tx, changed) => revokeGrants(tx, [grantId], changed));
  throw new InvalidGrant('the refresh token was already used; the grant is revoked');
}

/** A refresh token is issued only to clients that registered the refresh grant. */
function offersRefresh(client: Client): boolean {
  return client.grantTypes.includes('refresh_token');
}
