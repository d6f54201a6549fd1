/**
 * The organization service: the OAuth 2.1 authorization server, the organization MCP endpoint and the
 * people's web pages (interface A).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { OrgConfig } from '../config.js';
import { secureDataDir } from '../platform/data-dir.js';
import { openDatabase, ping, type Database } from '../platform/database.js';
import { createHttpServer, listening, type HttpServer, type Listening } from '../platform/http.js';
import { JOB_DRAIN_MS, startJobWorker, type JobWorker } from '../platform/jobs.js';
import { closeInOrder } from '../platform/lifecycle.js';
import { parseTraceparent, withTraceparent } from '../platform/trace.js';
import { createVerifiedTokens, registerAuthRoutes } from '../auth/index.js';
import { ChangeFeed } from '../platform/changes.js';
import { createOrgReads } from './read-cache.js';
import { recordAuthActivity } from './activity/auth-events.js';
import { startActivitySealer } from './activity/chain.js';
import { bootstrapOrganization } from './bootstrap.js';
import { registerAgentApi } from './agent-api/routes.js';
import { deliveryJobHandlers, taskAnswerHandlers } from './delivery/deliveries.js';
import type { OrgContext } from './context.js';
import { decisionJobHandlers } from './decisions/resolve.js';
import { reminderJobHandlers } from './decisions/reminders.js';
import { announceJobHandlers, type EventChannel } from './events/announce.js';
import { eventDeliveryJobHandlers, webhookChannel } from './events/webhooks.js';
import { ensureHousekeepingScheduled, HOUSEKEEPING_JOB, housekeepingJob } from './housekeeping.js';
import { orgTools, registerOrgMcp } from './mcp/server.js';
import { registerFavicon } from '../platform/favicon.js';
import { registerMetrics } from '../platform/metrics.js';
import type { OrgToolDefinition } from './mcp/tools.js';
import { emailChannel, notificationJobHandlers } from './notifications/email.js';
import { createMailer } from './notifications/mailer.js';
import { invitationJobHandlers } from './notifications/invitations.js';
import { operationJobHandlers, type RegisteredKind } from './operations/operations.js';
import { OperationWatch } from './operations/watch.js';
import { pageNotFound, registerWebPages } from './web/index.js';
import { TASK_RUNS_JOB, ensureTaskRunsScheduled, taskRunsJob } from './tasks/runs.js';
import { askKind } from './assistant/ask.js';
import { taskKind, messageKind } from './delivery/kinds.js';
import { capabilityKind } from './capabilities/execute.js';

export interface OrgService extends Listening {
  app: HttpServer;
  database: Database;
  ctx: OrgContext;
  /** This process's worker on the durable job queue (housekeeping, operations). */
  jobs: JobWorker;
}

export interface OrgServiceOptions {
  /** The org MCP tools served; default all of them (tests add a tool to exercise a rule no tool needs yet). */
  mcpTools?: readonly OrgToolDefinition[];
  /** The operation kinds run here; default the real ones (tests replace one to exercise the machinery). */
  operationKinds?: readonly RegisteredKind[];
  /** A tool call's deadline in ms; default 25 s (spec 7.1). Tests shorten it. */
  toolDeadlineMs?: number;
  /** How long a claimed job stays invisible to other processes, in seconds; default 60. Tests shorten it. */
  jobLeaseSeconds?: number;
}

export async function createOrgService(config: OrgConfig, options: OrgServiceOptions = {}): Promise<OrgService> {
  const app = createHttpServer({ service: 'org', logLevel: config.logLevel, logFormat: config.logFormat, trustProxy: config.trustProxy, notFoundPage: pageNotFound });
  await secureDataDir(config.dataDir, app.log);
  const database = await openDatabase(config.database, { log: app.log });
  try {
    await bootstrapOrganization(database.db, config, app.log);
    await ensureHousekeepingScheduled(database.db);
    await ensureTaskRunsScheduled(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  // Work queued by any process wakes this one's worker (operations/watch.ts). The worker's handlers are made from ctx,
  // and ctx holds the worker: it is completed just below.
  const watch = await OperationWatch.open(database, { log: app.log, queued: () => ctx.jobs?.wake() });
  const changes = await ChangeFeed.open(database, { log: app.log });
  const ctx = {
    config,
    database,
    db: database.db,
    log: app.log,
    watch,
    recordAuthEvent: recordAuthActivity,
    changes,
    verifiedTokens: createVerifiedTokens(changes),
    reads: createOrgReads(changes),
  } as OrgContext;
  const mailer = config.mail ? createMailer(config.mail) : undefined;
  const worker = startJobWorker(database, {
    handlers: {
      [HOUSEKEEPING_JOB]: housekeepingJob(ctx),
      [TASK_RUNS_JOB]: taskRunsJob(ctx),
      ...operationJobHandlers(ctx, withDefaults(options.operationKinds)),
      ...decisionJobHandlers(ctx),
      ...reminderJobHandlers(ctx),
      ...notificationJobHandlers(ctx, mailer),
      ...invitationJobHandlers(ctx, mailer),
      ...deliveryJobHandlers(ctx),
      ...taskAnswerHandlers(ctx),
      ...announceJobHandlers(eventChannels(ctx)),
      ...eventDeliveryJobHandlers(ctx),
    },
    log: app.log,
    leaseSeconds: options.jobLeaseSeconds,
  });
  ctx.jobs = worker;
  const sealer = startActivitySealer(database.db, (error) => app.log.warn({ err: error }, 'sealing the activity log failed; retrying'));

  // W3C Trace Context: a request's work belongs to the trace its `traceparent` header names; a malformed one is ignored.
  app.addHook('onRequest', (request, _reply, done) => withTraceparent(parseTraceparent(request.headers.traceparent), done));

  // Every org answer is about a person or their credentials: none may be stored by any cache (RFC 9111
  // §5.2.2.5). Only the public metadata and JWKS routes set a lifetime of their own.
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  // Before every route, so its onResponse hook sees them all.
  if (config.metrics) registerMetrics(app, { service: 'org', database });
  app.get('/health', async (_request, reply) => {
    const ok = await ping(database.db);
    return reply.code(ok ? 200 : 503).send({ ok, service: 'atrium-org', mcp: '/mcp' });
  });

  registerAuthRoutes(app, ctx);
  const tools = options.mcpTools ?? orgTools;
  await registerWebPages(app, ctx, tools);
  registerOrgMcp(app, ctx, { tools, deadlineMs: options.toolDeadlineMs });
  registerFavicon(app);
  registerAgentApi(app, ctx);

  app.addHook('onClose', () =>
    closeInOrder(app.log, [
      { name: 'the job worker', run: () => worker.stop(), patienceMs: JOB_DRAIN_MS },
      { name: 'the mailer', run: () => mailer?.close() },
      { name: 'the activity sealer', run: () => sealer.stop() },
      { name: 'the operation watch', run: () => watch.close() },
      { name: 'the change feed', run: () => changes.close() },
      { name: 'the database', run: () => database.close(), state: () => ({ pool: database.pool() }) },
    ]),
  );
  return { app, database, ctx, jobs: worker, ...listening(app, 'org', config, bannerNotes(config)) };
}

/**
 * The MCP endpoint and where to learn how to connect to it, where a person goes first, and where the generated
 * owner password is kept (when it was generated).
 */
function bannerNotes(config: OrgConfig): (origin: string) => string[] {
  const passwordFile = path.join(config.dataDir, 'secrets', 'admin-password');
  return (origin) => [
    `MCP ${origin}/mcp (OAuth; set-up for each client on ${origin}/connect)`,
    `sign in at ${origin}/signin`,
    `MCP tools ${origin}/docs`,
    ...(existsSync(passwordFile) ? [`owner password in ${passwordFile}`] : []),
  ];
}

/** The organization's operation kinds (graphile-worker's task map: the engine is handed them, never imports them). */
const operationKinds: readonly RegisteredKind[] = [askKind, messageKind, taskKind, capabilityKind];

/** The real kinds, with any a test gives in place of the real one of its name. */
function withDefaults(replacing: readonly RegisteredKind[] = []): RegisteredKind[] {
  return operationKinds.map((kind) => replacing.find((given) => given.kind === kind.kind) ?? kind);
}

/** Where the organization's events go (DESIGN 4.8): every channel is told of every event and picks its recipients. */
function eventChannels(ctx: OrgContext): EventChannel[] {
  // Without SMTP_URL nobody is emailed, and nothing is written that would wait for a server.
  return [webhookChannel(ctx), ...(ctx.config.mail ? [emailChannel(ctx.db)] : [])];
}
