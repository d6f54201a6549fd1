import { sql } from 'drizzle-orm';
/**
 * Starts a real content service against a fresh database and speaks HTTP to it.
 */
import path from 'node:path';
import type { ContentConfig } from '../../src/config.js';
import { createContentService, type ContentService, type ContentServiceOptions } from '../../src/content/service.js';
import type { Engine, TestDatabase } from './databases.js';
import { injectRequest, sendRequest, type RequestOptions as HttpRequestOptions, type TestResponse } from './http.js';
import { startService } from './service.js';

export const TEST_SECRET = 'test-secret-0123456789abcdef';
export const actor = { actor_id: 'tester', actor_type: 'human' } as const;

export interface TestContent {
  url: string;
  service: ContentService;
  config: ContentConfig;
  /**
   * fetch against the service (http.ts), or Fastify's `inject` when started `inProcess`; `auth: true` adds the
   * bearer secret. fetch follows redirects, `inject` does not.
   */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** Waits until no job is due (revalidations and the like sent), so the database holds still. */
  settleJobs(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export type { TestResponse };

export interface RequestOptions extends HttpRequestOptions {
  /** Adds the bearer secret. */
  auth?: boolean;
}

export interface StartContentOptions extends ContentServiceOptions {
  config?: Partial<ContentConfig>;
  /** Share an existing database instead of a fresh one (for several processes on one PostgreSQL). */
  database?: TestDatabase;
  /** No port: requests are answered in-process by Fastify's `inject`, for rule tables that need no socket. */
  inProcess?: boolean;
}

export async function startContent(engine: Engine, { inProcess, ...options }: StartContentOptions = {}): Promise<TestContent> {
  let config!: ContentConfig;
  const { url, service, close } = await startService(engine, { prefix: 'content', database: options.database, inProcess }, ({ host, port, url, dataDir, database }) => {
    config = {
      host,
      port,
      publicUrl: url,
      database: database.config,
      apiSecret: TEST_SECRET,
      dataDir,
      assetDir: path.join(dataDir, 'assets'),
      revalidate: {},
      // Every test votes from 127.0.0.1; vote-limit.test.ts checks the real default.
      votesPerMinute: 10_000,
      logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
      ...options.config,
    };
    return createContentService(config, { jobPollMs: 100, ...options });
  });

  async function request(method: string, route: string, { auth, ...opts }: RequestOptions = {}): Promise<TestResponse> {
    const headers = auth ? { ...opts.headers, authorization: `Bearer ${TEST_SECRET}` } : opts.headers;
    return inProcess ? injectRequest(service.app, route, method, { ...opts, headers }) : sendRequest(url + route, method, { ...opts, headers });
  }

  return {
    url,
    service,
    config,
    request,
    async settleJobs(timeoutMs = 5000) {
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
        const [{ count }] = await service.ctx.database.rows<{ count: number }>(sql`SELECT count(*)::int AS count FROM jobs WHERE failed_at IS NULL AND run_at <= now()`);
        if (count === 0) return;
        await service.ctx.jobs.runDue();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('jobs did not settle');
    },
    close,
  };
}
