import type { FastifyBaseLogger } from 'fastify';
import type { OrgConfig } from '../config.js';
import type { Database, Db } from '../platform/database.js';

/** Everything the org service's domain functions, routes, pages and tools may need, built once. */
export interface OrgContext {
  config: OrgConfig;
  database: Database;
  db: Db;
  log: FastifyBaseLogger;
}
