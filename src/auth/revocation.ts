/**
 * Token revocation (RFC 7009): either kind of token, by the client it was issued to.
 */
import { eq, sql } from 'drizzle-orm';
import type { AuthContext } from './context.js';
import { findClient } from './clients.js';
import { InvalidRequest } from './errors.js';
import { revokeGrants } from './grants.js';
import { hashToken } from './ids.js';
import { requiredParam, type RawParams } from './params.js';
import { oauthTokens } from './schema.js';
import { ACCESS_REVOKED, revokingAccess } from './tokens.js';

/** POST /oauth/revoke. `token_type_hint` is optional (RFC 7009 §2.1) and not needed: hashes are unique. */
export async function revokeToken(ctx: AuthContext, params: RawParams, address?: string): Promise<void> {
  const token = requiredParam(params, 'token');
  // RFC 7009 §2.1: the client identifies itself (a public client by its client_id).
  const client = await findClient(ctx, requiredParam(params, 'client_id'), address);

  const [stored] = await ctx.db
    .select({ kind: oauthTokens.kind, clientId: oauthTokens.clientId, grantId: oauthTokens.grantId })
    .from(oauthTokens)
    .where(eq(oauthTokens.hash, hashToken(token)));

  // RFC 7009 §2.2: an unknown (or already invalid) token is answered 200 all the same.
  if (!stored) return;

  // RFC 7009 §2.1: a client may revoke only its own tokens; the request is refused otherwise.
  if (stored.clientId !== client.id) throw new InvalidRequest('the token was not issued to this client');

  // RFC 7009 §2.1: revoking a refresh token also invalidates the access tokens of its grant.
  await revokingAccess(ctx, async (tx, changed) => {
    if (stored.kind === 'refresh') return revokeGrants(tx, [stored.grantId], changed);
    await tx.update(oauthTokens).set({ revokedAt: sql`coalesce(${oauthTokens.revokedAt}, now())` }).where(eq(oauthTokens.hash, hashToken(token)));
    changed({ kind: ACCESS_REVOKED });
  });
}
