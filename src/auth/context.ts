import type { OrgConfig } from '../config.js';
import type { Database, Db } from '../platform/database.js';

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
}
