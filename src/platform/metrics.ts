/**
 * `GET /metrics` in the Prometheus text format (prom-client), served when METRICS_ENABLED is set: requests by
 * route and status, their latency, the job queue (due, scheduled later, failed) and the database connections.
 * Each service has its own registry, labelled with its name, so both can run in one process. Routes are
 * labelled by their pattern (`/blog/:slug`), never the raw URL, so the number of series stays bounded.
 */
import { sql } from 'drizzle-orm';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from './database.js';
import { onAnsweredEarly } from './early-answers.js';
import type { HttpServer } from './http.js';

export function registerMetrics(app: HttpServer, options: { service: string; database: Database }): void {
  const registry = new Registry();
  registry.setDefaultLabels({ service: options.service });
  collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to sending its response, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  new Gauge({
    name: 'jobs_queued',
    help: 'Jobs in the queue: due now, scheduled for later, and failed (kept for inspection)',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const [row] = await options.database.rows<{ due: number; later: number; failed: number }>(sql`
        SELECT count(*) FILTER (WHERE failed_at IS NULL AND run_at <= now())::int AS due,
               count(*) FILTER (WHERE failed_at IS NULL AND run_at > now())::int AS later,
               count(*) FILTER (WHERE failed_at IS NOT NULL)::int AS failed
        FROM jobs`);
      for (const state of ['due', 'later', 'failed'] as const) this.set({ state }, row?.[state] ?? 0);
    },
  });
  new Gauge({
    name: 'database_connections',
    help: 'Database connections of this process: total open, idle, and requests waiting for one',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const pool = options.database.pool();
      for (const state of ['total', 'idle', 'waiting'] as const) this.set({ state }, pool[state]);
    },
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? '(unmatched)';
    requests.inc({ method: request.method, route, status: reply.statusCode });
    latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
  onAnsweredEarly(app, ({ method, route, status, milliseconds }) => {
    requests.inc({ method, route, status });
    latency.observe({ method, route }, milliseconds / 1000);
  });
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}
