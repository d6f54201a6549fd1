/**
 * The content service: one Fastify server carrying the REST API (interface C) and the content MCP
 * endpoint (interface B) over one domain layer, plus the job worker for scheduled publishing and
 * revalidation retries.
 */
import type { ContentConfig } from '../config.js';
import { ChangeFeed } from '../platform/changes.js';
import { secureDataDir } from '../platform/data-dir.js';
import { openDatabase } from '../platform/database.js';
import { createHttpServer, listening, type HttpServer, type Listening } from '../platform/http.js';
import { JOB_DRAIN_MS, startJobWorker, type JobHandler } from '../platform/jobs.js';
import { closeInOrder } from '../platform/lifecycle.js';
import { registerFavicon } from '../platform/favicon.js';
import { registerMetrics } from '../platform/metrics.js';
import { CONTENT_SECRET_NAME, loadOrCreateSecret } from '../platform/secrets.js';
import type { ContentContext } from './context.js';
import { ensureContentHousekeepingScheduled } from './housekeeping.js';
import { contentJobHandlers } from './jobs.js';
import { createContentReads } from './read-cache.js';
import { registerContentMcp } from './mcp/server.js';
import { noStoreWhenAuthenticated } from './rest/auth.js';
import { registerRestRoutes } from './rest/index.js';
import { registerOpenApi } from './rest/openapi.js';
import { registerPublicCache } from './rest/public-cache.js';

export interface ContentService extends Listening {
  app: HttpServer;
  ctx: ContentContext;
}

export interface ContentServiceOptions {
  /** How often the job worker looks for due jobs; default 500 ms. */
  jobPollMs?: number;
  /**
   * `false` turns off both read caches — the domain read cache (read-cache.ts) and the REST public cache
   * (rest/public-cache.ts) — so every read goes to the database. For benchmarks and diagnostics only
   * (`npm run bench:content` measures the database path with it); a deployed service keeps the default, true.
   */
  readCaches?: boolean;
}

export async function createContentService(config: ContentConfig, options: ContentServiceOptions = {}): Promise<ContentService> {
  const app = createHttpServer({ service: 'content', logLevel: config.logLevel, logFormat: config.logFormat, trustProxy: config.trustProxy });
  await secureDataDir(config.dataDir, app.log);
  const database = await openDatabase(config.database, { log: app.log });
  let apiSecret = config.apiSecret;
  let secretSource = 'CONTENT_API_SECRET';
  if (!apiSecret) {
    const stored = await loadOrCreateSecret(config.dataDir, CONTENT_SECRET_NAME);
    apiSecret = stored.value;
    // Information, not a warning: generating it is what a first start without CONTENT_API_SECRET is for.
    if (stored.created) app.log.info({ file: stored.file }, `generated CONTENT_API_SECRET, kept in ${stored.file}`);
    secretSource = stored.file;
  }

  const changes = await ChangeFeed.open(database, { log: app.log });
  const readCaches = options.readCaches ?? true;
  const reads = readCaches ? createContentReads(changes) : undefined;
  // The worker's first poll comes after `pollMs`, long after `ctx` below exists; each handler is made from it.
  const handlers = Object.fromEntries(
    Object.entries(contentJobHandlers).map(([kind, make]): [string, JobHandler] => [kind, (payload, job) => make(ctx)(payload as never, job)]),
  );
  const jobs = startJobWorker(database, { handlers, log: app.log, pollMs: options.jobPollMs });
  const ctx: ContentContext = { config, database, db: database.db, apiSecret, log: app.log, changes, reads, jobs };
  await ensureContentHousekeepingScheduled(database.db);

  app.addHook('onRequest', noStoreWhenAuthenticated(ctx));
  // Before every route, so its onResponse hook sees them all.
  if (config.metrics) registerMetrics(app, { service: 'content', database });
  // Both watch routes as they are declared, so they come first.
  registerPublicCache(app, changes, { kinds: ['blog', 'changelog', 'roadmap'], serve: readCaches });
  await registerOpenApi(app, ctx);
  registerRestRoutes(app, ctx);
  registerContentMcp(app, ctx);
  registerFavicon(app);

  app.addHook('onClose', () =>
    closeInOrder(app.log, [
      { name: 'the job worker', run: () => ctx.jobs.stop(), patienceMs: JOB_DRAIN_MS },
      { name: 'the change feed', run: () => changes.close() },
      { name: 'the database', run: () => database.close(), state: () => ({ pool: database.pool() }) },
    ]),
  );

  const notes = (origin: string) => [
    `MCP ${origin}/mcp (bearer token: the content API secret, in ${secretSource})`,
    `API reference ${origin}/docs`,
  ];
  return { app, ctx, ...listening(app, 'content', config, notes) };
}
