/**
 * Access and refresh tokens (DESIGN 4.7): opaque, random, stored only as hashes, bound to the grant, the
 * client, the person and the resource they were issued for.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { PgInsertValue } from 'drizzle-orm/pg-core';
import type { AuthContext, StoredAccessToken, VerifiedAccessToken } from './context.js';
import { transact, type Change, type ChangeFeed } from '../platform/changes.js';
import type { Queryable, Tx } from '../platform/database.js';
import { ReadCache } from '../platform/read-cache.js';
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

/** Reports a change a write made, to be announced on the change feed when its transaction commits. */
export type Changed = (change: Change) => void;


/** How often a grant's `last_used_at` is written while its tokens are in use (one write, not one per call). */
const LAST_USED_RESOLUTION = sql`interval '1 minute'`;

/**
 * The change kind announced, in its transaction, by every write that makes access tokens invalid before they
 * expire (a revoked token, grant, or person): every process then drops the tokens it verified (no key: a
 * revocation is rare, and dropping them all is simpler than tracing which tokens a grant issued).
 */
export const ACCESS_REVOKED = 'oauth_access_revoked';


/**
 * The access tokens this process verified, by hash, kept exact by the change feed: a revocation committed by any
 * process drops them all on every process (ACCESS_REVOKED), and while the feed is down none is served. A token
 * past its expiry is refused even while still kept; `maxAgeMs` (a minute) bounds how stale `last_used_at` gets.
 */
export function createVerifiedTokens(changes: ChangeFeed, maxEntries = 10_000): ReadCache<StoredAccessToken> {
  return new ReadCache<StoredAccessToken>({ maxAgeMs: 60_000, maxEntries }).follow(changes, { kinds: [ACCESS_REVOKED] });
}

/**
 * The person and scopes behind a bearer token presented to `resource`, or null when the token is unknown,
 * expired, revoked (itself or its grant), or was issued for another resource (RFC 8707 §2; DESIGN 4.7).
 */
export async function verifyAccessToken(ctx: AuthContext, token: string, resource: string): Promise<VerifiedAccessToken | null> {
  if (!token.startsWith(PREFIX.accessToken)) return null;
  const hash = hashToken(token);
  const load = () => readAccessToken(ctx, hash);
  const stored = ctx.verifiedTokens ? await ctx.verifiedTokens.read(hash, load) : await load();
  if (!stored || stored.resource !== resource || Date.parse(stored.expiresAt) <= Date.now()) return null;
  return { personId: stored.personId, clientId: stored.clientId, scopes: stored.scopes, grantId: stored.grantId, expiresAt: stored.expiresAt };
}

/**
 * The valid access token with that hash, recording its grant's use at most once per `LAST_USED_RESOLUTION`.
 * While the token is kept in memory this is not read again, so the grant's use is recorded when it is next
 * read: `last_used_at` lags by at most the cache's age limit.
 */
async function readAccessToken(ctx: AuthContext, hash: string): Promise<StoredAccessToken | undefined> {
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
        eq(oauthTokens.hash, hash),
        eq(oauthTokens.kind, 'access'),
        isNull(oauthTokens.revokedAt),
        isNull(oauthGrants.revokedAt),
        sql`${oauthTokens.expiresAt} > now()`,
      ),
    );
  if (!row) return undefined;
  if (row.stale) await ctx.db.update(oauthGrants).set({ lastUsedAt: sql`now()` }).where(eq(oauthGrants.id, row.grantId));
  return { personId: row.personId, clientId: row.clientId, scopes: row.scopes, grantId: row.grantId, expiresAt: toIso(row.expiresAt), resource: row.resource };
}

/**
 * Runs a write that revokes access in a transaction of its own and announces ACCESS_REVOKED in it, so every
 * process refuses the revoked tokens from the moment it commits (this one before the write answers). `work`
 * reports through `changed` what else it changed.
 */
export function revokingAccess<T>(ctx: AuthContext, work: (tx: Tx, changed: Changed) => Promise<T>): Promise<T> {
  if (!ctx.changes) return ctx.db.transaction((tx) => work(tx, () => {}));
  return transact(ctx.db, ctx.changes, (tx, changed) => work(tx, changed));
}

export function expiresIn(seconds: number) {
  return sql`now() + make_interval(secs => ${seconds})`;
}
