import type { FastifyBaseLogger } from 'fastify';
import type { OrgConfig } from '../config.js';
import type { AuthEvent } from '../auth/index.js';
import type { Database, Db, Queryable } from '../platform/database.js';
import type { JobWorker } from '../platform/jobs.js';
import type { OperationWatch } from './operations/watch.js';

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
}
