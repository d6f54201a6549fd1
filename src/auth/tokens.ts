/**
 * Access and refresh tokens (DESIGN 4.7): opaque, random, stored only as hashes, bound to the grant, the
 * client, the person and the resource they were issued for.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { PgInsertValue } from 'drizzle-orm/pg-core';
import type { AuthContext } from './context.js';
import type { Queryable } from '../platform/database.js';
import { toIso } from '../platform/time.js';
import { hashToken, PREFIX, randomToken } from './ids.js';
import { LIFETIME } from './lifetimes.js';
import { oauthGrants, oauthTokens } from './schema.js';
import { formatScope } from './scopes.js';

export interface GrantBinding {
  grantId: string;
  clientId: string;
  personId: string;
  resource: string;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken?: string;
  scopes: string[];
}

/**
 * Issues an access token and, when the client registered the refresh grant, a refresh token. RFC 6749 §6:
 * the new refresh token keeps the scope of the one it replaces even when the access token is narrowed.
 */
export async function issueTokens(
  db: Queryable,
  binding: GrantBinding,
  scopes: { access: string[]; refresh: string[] | null },
): Promise<IssuedTokens> {
  const accessToken = randomToken(PREFIX.accessToken);
  const refreshToken = scopes.refresh ? randomToken(PREFIX.refreshToken) : undefined;
  const rows: Array<PgInsertValue<typeof oauthTokens>> = [
    { hash: hashToken(accessToken), kind: 'access', ...binding, scopes: scopes.access, expiresAt: expiresIn(LIFETIME.accessToken) },
  ];
  if (refreshToken && scopes.refresh) {
    rows.push({ hash: hashToken(refreshToken), kind: 'refresh', ...binding, scopes: scopes.refresh, expiresAt: expiresIn(LIFETIME.refreshToken) });
  }
  await db.insert(oauthTokens).values(rows);
  await db.update(oauthGrants).set({ lastUsedAt: sql`now()` }).where(eq(oauthGrants.id, binding.grantId));
  return { accessToken, refreshToken, scopes: scopes.access };
}

/** Spec 2.2 plus `scope` (RFC 6749 §5.1), always, since the granted scope may differ from the requested. */
export function tokenResponse(issued: IssuedTokens) {
  return {
    access_token: issued.accessToken,
    token_type: 'Bearer' as const,
    expires_in: LIFETIME.accessToken,
    ...(issued.refreshToken ? { refresh_token: issued.refreshToken } : {}),
    scope: formatScope(issued.scopes),
  };
}

export interface VerifiedAccessToken {
  personId: string;
  clientId: string;
  scopes: string[];
  grantId: string;
  expiresAt: string;
}

/** How often a grant's `last_used_at` is written while its tokens are in use (one write, not one per call). */
const LAST_USED_RESOLUTION = sql`interval '1 minute'`;

/**
 * The person and scopes behind a bearer token presented to `resource`, or null when the token is unknown,
 * expired, revoked (itself or its grant), or was issued for another resource (RFC 8707 §2; DESIGN 4.7).
 */
export async function verifyAccessToken(ctx: AuthContext, token: string, resource: string): Promise<VerifiedAccessToken | null> {
  if (!token.startsWith(PREFIX.accessToken)) return null;
  const [row] = await ctx.db
    .select({
      personId: oauthTokens.personId,
      clientId: oauthTokens.clientId,
      scopes: oauthTokens.scopes,
      grantId: oauthTokens.grantId,
      expiresAt: oauthTokens.expiresAt,
      resource: oauthTokens.resource,
      stale: sql<boolean>`${oauthGrants.lastUsedAt} IS NULL OR ${oauthGrants.lastUsedAt} < now() - ${LAST_USED_RESOLUTION}`,
    })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(
      and(
        eq(oauthTokens.hash, hashToken(token)),
        eq(oauthTokens.kind, 'access'),
        isNull(oauthTokens.revokedAt),
        isNull(oauthGrants.revokedAt),
        sql`${oauthTokens.expiresAt} > now()`,
      ),
    );
  if (!row || row.resource !== resource) return null;
  if (row.stale) await ctx.db.update(oauthGrants).set({ lastUsedAt: sql`now()` }).where(eq(oauthGrants.id, row.grantId));
  return { personId: row.personId, clientId: row.clientId, scopes: row.scopes, grantId: row.grantId, expiresAt: toIso(row.expiresAt) };
}

export function expiresIn(seconds: number) {
  return sql`now() + make_interval(secs => ${seconds})`;
}
