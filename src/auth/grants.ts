/**
 * Grants: what one person allowed one client (DESIGN 4.7). Each consent creates one; its code and every
 * token issued from it point back to it, so a grant is the unit of revocation. The grants of one person
 * and one client together are that person's "connected client" (DESIGN 4.1, 4.6).
 */
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { AuthContext } from './context.js';
import { inTransaction, type Queryable } from '../platform/database.js';
import { toIso } from '../platform/time.js';
import { clientDisplayName, storedClientName } from './clients.js';
import { PREFIX, randomToken } from './ids.js';
import { oauthGrants, oauthTokens } from './schema.js';
import { SCOPE_NAMES } from './scopes.js';
import { ACCESS_REVOKED, revokingAccess, type Changed } from './tokens.js';

export interface NewGrant {
  personId: string;
  clientId: string;
  scopes: string[];
  resource: string;
}

export async function createGrant(db: Queryable, grant: NewGrant): Promise<string> {
  const id = randomToken(PREFIX.grant);
  await db.insert(oauthGrants).values({ id, ...grant });
  return id;
}

/**
 * Revokes grants and every token issued from them (RFC 6749 §4.1.2 for a replayed code, OAuth 2.1 §4.3.1
 * for a reused refresh token, RFC 7009 §2.1 for a revoked refresh token, DESIGN 4.6 for a disconnect), and
 * reports it through `changed` so that the enclosing write announces it (tokens.ts `revokingAccess`).
 */
export async function revokeGrants(db: Queryable, grantIds: string[], changed: Changed): Promise<void> {
  if (grantIds.length === 0) return;
  await inTransaction(db, async (tx) => {
    await tx.update(oauthGrants).set({ revokedAt: sql`now()` }).where(and(inArray(oauthGrants.id, grantIds), isNull(oauthGrants.revokedAt)));
    await tx.update(oauthTokens).set({ revokedAt: sql`now()` }).where(and(inArray(oauthTokens.grantId, grantIds), isNull(oauthTokens.revokedAt)));
  });
  changed({ kind: ACCESS_REVOKED });
}

export interface Connection {
  clientId: string;
  clientName: string;
  /** The hosts of the client's registered redirect URIs: where consent sends the person back. */
  redirectHosts: string[];
  scopes: string[];
  connectedAt: string;
  lastUsedAt?: string;
}

/**
 * The clients a person has connected: every client with a grant that is not revoked and can still be used
 * (a live token, or a code not yet redeemed). Scopes are the union over that client's live grants.
 */
export async function listConnections(ctx: AuthContext, personId: string): Promise<Connection[]> {
  const grants = await ctx.database.rows<{
    client_id: string;
    kind: 'registered' | 'metadata_document';
    name: string | null;
    redirect_uris: string[];
    scopes: string[];
    created_at: string;
    last_used_at: string | null;
  }>(sql`
    SELECT g.client_id, c.kind, c.name, c.redirect_uris, g.scopes, g.created_at::text, g.last_used_at::text
      FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id
     WHERE g.person_id = ${personId} AND g.revoked_at IS NULL
       AND (EXISTS (SELECT 1 FROM oauth_tokens t
                     WHERE t.grant_id = g.id AND t.revoked_at IS NULL AND t.used_at IS NULL AND t.expires_at > now())
         OR EXISTS (SELECT 1 FROM oauth_codes k
                     WHERE k.grant_id = g.id AND k.used_at IS NULL AND k.expires_at > now()))
     ORDER BY g.created_at`);
  const connections = new Map<string, Connection>();
  for (const grant of grants) {
    const connection = connections.get(grant.client_id) ?? {
      clientId: grant.client_id,
      clientName: clientDisplayName({ id: grant.client_id, kind: grant.kind, name: grant.name }),
      redirectHosts: [...new Set(grant.redirect_uris.map(hostOf))],
      scopes: [],
      connectedAt: toIso(grant.created_at),
    };
    connection.scopes = SCOPE_NAMES.filter((scope) => connection.scopes.includes(scope) || grant.scopes.includes(scope));
    const lastUsedAt = grant.last_used_at ? toIso(grant.last_used_at) : undefined;
    if (lastUsedAt && (!connection.lastUsedAt || lastUsedAt > connection.lastUsedAt)) connection.lastUsedAt = lastUsedAt;
    connections.set(grant.client_id, connection);
  }
  return [...connections.values()];
}

/** DESIGN 4.6: disconnecting revokes every grant and token of that client for that person. */
export async function disconnectClient(ctx: AuthContext, personId: string, clientId: string): Promise<void> {
  await revokingAccess(ctx, async (tx, changed) => {
    const grants = await tx
      .select({ id: oauthGrants.id })
      .from(oauthGrants)
      .where(and(eq(oauthGrants.personId, personId), eq(oauthGrants.clientId, clientId), isNull(oauthGrants.revokedAt)));
    if (grants.length === 0) return;
    await revokeGrants(
      tx,
      grants.map((grant) => grant.id),
      changed,
    );
    await ctx.recordAuthEvent?.(tx, { kind: 'client.disconnected', personId, clientId, clientName: await storedClientName(tx, clientId), grants: grants.length });
  });
}

/**
 * DESIGN 4.6: a person removed from the organization keeps no access: every grant they gave, and every token issued
 * from it, is revoked in `db` (the transaction of the removal). Returns how many grants were revoked.
 */
export async function revokePersonGrants(db: Queryable, personId: string, changed: Changed): Promise<number> {
  const grants = await db
    .select({ id: oauthGrants.id })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.personId, personId), isNull(oauthGrants.revokedAt)));
  await revokeGrants(
    db,
    grants.map((grant) => grant.id),
    changed,
  );
  return grants.length;
}

function hostOf(uri: string): string {
  try {
    return new URL(uri).host || uri;
  } catch {
    return uri;
  }
}
