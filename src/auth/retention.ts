/**
 * What the authorization server deletes once it can never be used again (run by the org housekeeping job),
 * so its tables do not grow for ever. Lifetimes are in lifetimes.ts (DESIGN 4.7).
 */
import { and, isNotNull, lt, lte, notExists, or, sql } from 'drizzle-orm';
import type { Queryable } from '../platform/database.js';
import { oauthAuthorizationRequests, oauthCodes, oauthGrants, oauthTokens } from './schema.js';

/**
 * Codes and tokens are kept one day past their expiry or revocation: a late replay of a used code or a
 * rotated refresh token is then still recognised as one and revokes its grant (token.ts), and a token seen
 * in a log can still be traced to its grant.
 */
export const SPENT_OAUTH_GRACE_SECONDS = 24 * 60 * 60;

export interface OAuthSweep {
  authorizationRequests: number;
  codes: number;
  tokens: number;
  grants: number;
}

export async function deleteSpentOAuthRows(db: Queryable): Promise<OAuthSweep> {
  const graceAgo = sql`now() - make_interval(secs => ${SPENT_OAUTH_GRACE_SECONDS})`;

  // An answered or expired request is never found again (authorization.ts looks up open requests only).
  const requests = await db
    .delete(oauthAuthorizationRequests)
    .where(or(isNotNull(oauthAuthorizationRequests.answeredAt), lte(oauthAuthorizationRequests.expiresAt, sql`now()`)))
    .returning({ id: oauthAuthorizationRequests.id });

  const codes = await db.delete(oauthCodes).where(lt(oauthCodes.expiresAt, graceAgo)).returning({ hash: oauthCodes.hash });

  const tokens = await db
    .delete(oauthTokens)
    .where(or(lt(oauthTokens.expiresAt, graceAgo), lt(oauthTokens.revokedAt, graceAgo)))
    .returning({ hash: oauthTokens.hash });

  // A grant goes (with its codes and tokens: ON DELETE CASCADE) once it can never be used again: revoked a
  // day ago with no live token left, or with no code or token left at all. Live grants are what /connections
  // lists (grants.ts), so nothing a person sees there is touched.
  const liveToken = db
    .select({ one: sql`1` })
    .from(oauthTokens)
    .where(and(sql`${oauthTokens.grantId} = ${oauthGrants.id}`, sql`${oauthTokens.revokedAt} IS NULL`, sql`${oauthTokens.expiresAt} > now()`));
  const anyToken = db.select({ one: sql`1` }).from(oauthTokens).where(sql`${oauthTokens.grantId} = ${oauthGrants.id}`);
  const anyCode = db.select({ one: sql`1` }).from(oauthCodes).where(sql`${oauthCodes.grantId} = ${oauthGrants.id}`);
  const grants = await db
    .delete(oauthGrants)
    .where(
      and(
        lt(oauthGrants.createdAt, graceAgo),
        or(and(lt(oauthGrants.revokedAt, graceAgo), notExists(liveToken)), and(notExists(anyToken), notExists(anyCode))),
      ),
    )
    .returning({ id: oauthGrants.id });

  return { authorizationRequests: requests.length, codes: codes.length, tokens: tokens.length, grants: grants.length };
}
