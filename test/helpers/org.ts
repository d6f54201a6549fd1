/** Starts a real org service against a fresh database and speaks HTTP to it. */
import { secretResolver, type OrgConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/platform/database.js';
import { createOrgService, type OrgService, type OrgServiceOptions } from '../../src/org/service.js';
import { testDatabase, type Engine, type TestDatabase } from './databases.js';
import { injectRequest, sendRequest, type RequestOptions, type TestResponse } from './http.js';
import { startService } from './service.js';

/** The owner every test org starts with (DESIGN section 1: ATRIUM_ADMIN_EMAIL / ATRIUM_ADMIN_PASSWORD). */
export const OWNER = { email: 'owner@example.com', password: 'owner-password-123' } as const;

export interface TestOrg {
  url: string;
  service: OrgService;
  config: OrgConfig;
  /**
   * fetch against the service (http.ts), or Fastify's `inject` when started `inProcess`. Redirects are not
   * followed: the pages' 303s are what tests check.
   */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface StartOrgOptions extends OrgServiceOptions {
  config?: Partial<OrgConfig>;
  /** Share an existing database instead of a fresh one (for several processes on one PostgreSQL). */
  database?: TestDatabase;
  /** No port: requests are answered in-process by Fastify's `inject`, for rule tables that need no socket. */
  inProcess?: boolean;
}

export async function startOrg(engine: Engine, options: StartOrgOptions = {}): Promise<TestOrg> {
  let config!: OrgConfig;
  const { url, service, close } = await startService(engine, { prefix: 'org', database: options.database, inProcess: options.inProcess }, ({ host, port, url, dataDir, database }) => {
    config = {
      host,
      port,
      publicUrl: url,
      authPublicUrl: options.config?.publicUrl ?? url,
      database: engine === 'pglite' ? { ...database.config, schema: 'org' } : database.config,
      dataDir,
      admin: { email: OWNER.email, password: OWNER.password },
      cimdAllowLoopback: false,
      // Every test client registers from 127.0.0.1; registration-limit.test.ts checks the real default.
      registrationsPerHour: 10_000,
      llm: {},
      resolveSecret: secretResolver(),
      logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
      ...options.config,
    };
    const { config: _config, database: _database, inProcess: _inProcess, ...serviceOptions } = options;
    return createOrgService(config, serviceOptions);
  });
  const request: TestOrg['request'] = (method, route, opts) =>
    options.inProcess ? injectRequest(service.app, route, method, opts) : sendRequest(url + route, method, opts, 'manual');
  return { url, service, config, request, close };
}

/** A fresh, migrated org database without a running service, for domain tests. */
export async function openOrgDatabase(engine: Engine): Promise<{ database: Database; close(): Promise<void> }> {
  const fresh = testDatabase(engine);
  const database = await openDatabase(engine === 'pglite' ? { ...fresh.config, schema: 'org' } : fresh.config);
  return {
    database,
    async close() {
      await database.close();
      await fresh.drop();
    },
  };
}
