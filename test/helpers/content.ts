/**
 * Starts a real content service on port 0 against a fresh database and speaks HTTP to it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ContentConfig } from '../../src/config.js';
import { createContentService, type ContentService, type ContentServiceOptions } from '../../src/content/service.js';
import { testDatabase, type Engine, type TestDatabase } from './databases.js';

export const TEST_SECRET = 'test-secret-0123456789abcdef';
export const actor = { actor_id: 'tester', actor_type: 'human' } as const;

export interface TestContent {
  url: string;
  service: ContentService;
  config: ContentConfig;
  /** fetch against the service; `auth: true` adds the bearer secret, `json` sends a JSON body. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface RequestOptions {
  json?: unknown;
  body?: BodyInit;
  auth?: boolean;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface StartContentOptions extends ContentServiceOptions {
  config?: Partial<ContentConfig>;
  /** Share an existing database instead of a fresh one (for several processes on one PostgreSQL). */
  database?: TestDatabase;
}

export async function startContent(engine: Engine, options: StartContentOptions = {}): Promise<TestContent> {
  const database = options.database ?? testDatabase(engine);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-content-'));
  const config: ContentConfig = {
    host: '127.0.0.1',
    port: 0,
    publicUrl: 'http://placeholder',
    database: database.config,
    apiSecret: TEST_SECRET,
    dataDir,
    assetDir: path.join(dataDir, 'assets'),
    revalidate: {},
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...options.config,
  };
  const service = await createContentService(config, { jobPollMs: 100, ...options });
  const url = await service.listen();
  config.publicUrl = options.config?.publicUrl ?? url;

  async function request(method: string, route: string, opts: RequestOptions = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.auth) headers.authorization = `Bearer ${TEST_SECRET}`;
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = typeof opts.json === 'string' ? opts.json : JSON.stringify(opts.json);
    }
    const response = await fetch(url + route, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  return {
    url,
    service,
    config,
    request,
    async close() {
      await service.close();
      if (!options.database) await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
