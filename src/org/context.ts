import type { FastifyBaseLogger } from 'fastify';
import type { OrgConfig } from '../config.js';
import type { AuthEvent } from '../auth/index.js';
import type { StoredAccessToken } from '../auth/context.js';
import type { ChangeFeed } from '../platform/changes.js';
import type { ReadCache } from '../platform/read-cache.js';
import type { Database, Db, Queryable } from '../platform/database.js';
import type { JobWorker } from '../platform/jobs.js';
import type { OperationWatch } from './operations/watch.js';
import type { OrgReads } from './read-cache.js';

/** Everything the org service's domain functions, routes, pages and tools may need, built once. */
export interface OrgContext {
  config: OrgConfig;
  database: Database;
  db: Db;
  log: FastifyBaseLogger;
  /** Wakes callers waiting on an operation, on whichever process it moved (operations/watch.ts). */
  watch: OperationWatch;
  /** This process's worker on the durable job queue. */
  jobs: JobWorker;
  /** The authorization server's consents and disconnections, recorded in the activity log (activity/auth-events.ts). */
  recordAuthEvent: (db: Queryable, event: AuthEvent) => Promise<void>;
  /** Where writes announce what changed (changes.ts), so every process drops what it keeps of it. */
  changes: ChangeFeed;
  /** The access tokens this process verified (auth/tokens.ts). */
  verifiedTokens: ReadCache<StoredAccessToken>;
  /** What the MCP tools read on every call (read-cache.ts). */
  reads: OrgReads;
}
