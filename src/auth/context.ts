import type { OrgConfig } from '../config.js';
import type { ChangeFeed } from '../platform/changes.js';
import type { Database, Db, Queryable } from '../platform/database.js';
import type { ReadCache } from '../platform/read-cache.js';

/** Who a valid access token acts for, with what, until when (tokens.ts `verifyAccessToken`). */
export interface VerifiedAccessToken {
  personId: string;
  clientId: string;
  scopes: string[];
  grantId: string;
  expiresAt: string;
}

/** An access token as verified from the database, kept in the process's memory by its hash. */
export interface StoredAccessToken extends VerifiedAccessToken {
  resource: string;
}

/** The settings the authorization server reads (src/config.ts). */
export type AuthConfig = Pick<OrgConfig, 'publicUrl' | 'authPublicUrl' | 'cimdAllowLoopback' | 'registrationsPerHour' | 'refreshReuseSeconds'>;

/**
 * What the authorization server needs from the service that hosts it: its settings and its database. The
 * org service passes its own context, which has all of it.
 */
export interface AuthContext {
  config: AuthConfig;
  database: Database;
  db: Db;
  /** Told of each consent answered and each client disconnected, in that change's transaction (the org's audit log). */
  recordAuthEvent?: (db: Queryable, event: AuthEvent) => Promise<void>;
  /** Where revocations are announced (tokens.ts `ACCESS_REVOKED`), so that every process refuses them at once. */
  changes?: ChangeFeed;
  /** The access tokens this process verified (tokens.ts `createVerifiedTokens`); without it each is read every time. */
  verifiedTokens?: ReadCache<StoredAccessToken>;
}

/** What a person did about a client: allowed it (with the scopes granted of those asked), denied it, or disconnected it. */
export type AuthEvent = ({ personId: string; clientId: string; clientName: string } & (
  | { kind: 'consent.granted'; scopes: string[]; requested: string[] }
  | { kind: 'consent.denied'; requested: string[] }
  | { kind: 'client.disconnected'; grants: number }
));
