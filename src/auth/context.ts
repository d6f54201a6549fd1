import type { OrgConfig } from '../config.js';
import type { Database, Db, Queryable } from '../platform/database.js';

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
}

/** What a person did about a client: allowed it (with the scopes granted of those asked), denied it, or disconnected it. */
export type AuthEvent =
  | { kind: 'consent.granted'; personId: string; clientId: string; scopes: string[]; requested: string[] }
  | { kind: 'consent.denied'; personId: string; clientId: string; requested: string[] }
  | { kind: 'client.disconnected'; personId: string; clientId: string; grants: number };
