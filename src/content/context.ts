import type { FastifyBaseLogger } from 'fastify';
import type { ContentConfig } from '../config.js';
import type { Change, ChangeFeed } from '../platform/changes.js';
import type { Database, Db } from '../platform/database.js';
import type { JobHandler, JobWorker } from '../platform/jobs.js';
import type { ContentReads } from './kinds.js';

/** Everything a content domain function, REST route or MCP tool may need, built once per service. */
export interface ContentContext {
  config: ContentConfig;
  database: Database;
  db: Db;
  /** The bearer secret protecting writes, drafts, activity and the MCP endpoint. */
  apiSecret: string;
  jobs: JobWorker;
  log: FastifyBaseLogger;
  /** Content writes announce themselves here (write.ts); read caches listen. */
  changes: ChangeFeed;
  /** The domain read cache (read-cache.ts); absent when the service runs with `readCaches: false`. */
  reads?: ContentReads;
  /** Set inside `atomically` (mcp/atomically.ts): writes report their changes to the enclosing transaction. */
  enclosingWrite?: (change: Change) => void;
}

/**
 * Job kinds the content service runs, registered by the modules that own them. Each handler takes its own
 * payload type: the module enqueues through the same `jobKind`, so the stored payload has that shape.
 */
export type ContentJobHandlers = Record<string, (ctx: ContentContext) => JobHandler<never>>;
