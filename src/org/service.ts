/**
 * The organization service: the OAuth 2.1 authorization server, the organization MCP endpoint and the
 * people's web pages (interface A).
 */
import { sql } from 'drizzle-orm';
import type { OrgConfig } from '../config.js';
import { openDatabase, type Database } from '../platform/database.js';
import { createHttpServer, type HttpServer } from '../platform/http.js';
import { startJobWorker, type JobWorker } from '../platform/jobs.js';
import { registerAuthRoutes } from '../auth/routes.js';
import { bootstrapOrganization } from './bootstrap.js';
import { registerAgentApi } from './delivery/agent-api.js';
import { deliveryJobHandlers, taskAnswerHandlers } from './delivery/deliveries.js';
import type { OrgContext } from './context.js';
import { ensureHousekeepingScheduled, HOUSEKEEPING_JOB, housekeepingJob } from './housekeeping.js';
import { registerOrgMcp } from './mcp/server.js';
import type { OrgToolDefinition } from './mcp/tools.js';
import { operationJobHandlers, type OperationRunners } from './operations/operations.js';
import { operationRunners } from './operations/runners.js';
import { OperationWatch } from './operations/watch.js';
import { ensureTaskRunsScheduled, TASK_RUNS_JOB, taskRunsJob } from './tasks.js';
import { registerWebPages } from './web/index.js';

export interface OrgService {
  app: HttpServer;
  database: Database;
  ctx: OrgContext;
  /** This process's worker on the durable job queue (housekeeping, operations). */
  jobs: JobWorker;
  listen(): Promise<string>;
  close(): Promise<void>;
}

export interface OrgServiceOptions {
  /** The org MCP tools served; default all of them (tests add a tool to exercise a rule no tool needs yet). */
  mcpTools?: readonly OrgToolDefinition[];
  /** The runner of each operation kind; default the real ones (tests add one to exercise the machinery). */
  operationRunners?: OperationRunners;
  /** A tool call's budget in ms; default 25 s (spec 7.1). Tests shorten it. */
  toolBudgetMs?: number;
  /** How long a claimed job stays invisible to other processes, in seconds; default 60. Tests shorten it. */
  jobLeaseSeconds?: number;
}

export async function createOrgService(config: OrgConfig, options: OrgServiceOptions = {}): Promise<OrgService> {
  const app = createHttpServer({ service: 'org', logLevel: config.logLevel, trustProxy: config.trustProxy });
  const database = await openDatabase(config.database);
  try {
    await bootstrapOrganization(database.db, config, app.log);
    await ensureHousekeepingScheduled(database.db);
    await ensureTaskRunsScheduled(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  // Work queued by any process wakes this one's worker (watch.ts); the worker exists just below.
  let jobs: JobWorker | undefined;
  const watch = await OperationWatch.open(database, { log: app.log, queued: () => jobs?.wake() });
  const ctx: OrgContext = { config, database, db: database.db, log: app.log, watch };
  const worker = startJobWorker(database, {
    handlers: {
      [HOUSEKEEPING_JOB]: housekeepingJob(ctx),
      [TASK_RUNS_JOB]: taskRunsJob(ctx),
      ...operationJobHandlers(ctx, options.operationRunners ?? operationRunners),
      ...deliveryJobHandlers(ctx),
      ...taskAnswerHandlers(ctx),
    },
    log: app.log,
    leaseSeconds: options.jobLeaseSeconds,
  });
  jobs = worker;

  app.get('/health', async (_request, reply) => {
    const ok = await database.db.execute(sql`SELECT 1`).then(() => true, () => false);
    return reply.code(ok ? 200 : 503).send({ ok, service: 'atrium-org', mcp: '/mcp' });
  });

  registerAuthRoutes(app, ctx);
  await registerWebPages(app, ctx);
  registerOrgMcp(app, ctx, { tools: options.mcpTools, budgetMs: options.toolBudgetMs });
  registerAgentApi(app, ctx);

  app.addHook('onClose', async () => {
    await worker.stop();
    await watch.close();
    await database.close();
  });
  return {
    app,
    database,
    ctx,
    jobs: worker,
    async listen() {
      const address = await app.listen({ host: config.host, port: config.port });
      app.log.info({ url: config.publicUrl, listening: address }, `org service listening on ${address}`);
      return address;
    },
    close: () => app.close(),
  };
}
