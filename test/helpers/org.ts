/**
 * Starts a real org service on port 0 against a fresh database and speaks HTTP to it.
 *
 * The public URLs are only known once the server listens, so they are written into the config object
 * after `listen()`; the service reads `config.publicUrl` / `config.authPublicUrl` per request, never at
 * construction.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { secretResolver, type OrgConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/platform/database.js';
import { createOrgService, type OrgService, type OrgServiceOptions } from '../../src/org/service.js';
import { testDatabase, type Engine, type TestDatabase } from './databases.js';
import { sendRequest, type RequestOptions, type TestResponse } from './http.js';

/** The owner every test org starts with (DESIGN section 1: ATRIUM_ADMIN_EMAIL / ATRIUM_ADMIN_PASSWORD). */
export const OWNER = { email: 'owner@example.com', password: 'owner-password-123' } as const;

export interface TestOrg {
  url: string;
  service: OrgService;
  config: OrgConfig;
  /** fetch against the service (http.ts). Redirects are not followed: the pages' 303s are what tests check. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}


export interface StartOrgOptions extends OrgServiceOptions {
  config?: Partial<OrgConfig>;
  /** Share an existing database instead of a fresh one (for several processes on one PostgreSQL). */
  database?: TestDatabase;
}

export async function startOrg(engine: Engine, options: StartOrgOptions = {}): Promise<TestOrg> {
  const database = options.database ?? testDatabase(engine);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-org-'));
  const config: OrgConfig = {
    host: '127.0.0.1',
    port: 0,
    publicUrl: 'http://placeholder',
    authPublicUrl: 'http://placeholder',
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
  const { config: _config, database: _database, ...serviceOptions } = options;
  const service = await createOrgService(config, serviceOptions);
  const url = await service.listen();
  config.publicUrl = options.config?.publicUrl ?? url;
  config.authPublicUrl = options.config?.authPublicUrl ?? config.publicUrl;

  return {
    url,
    service,
    config,
    request: (method, route, opts) => sendRequest(url + route, method, opts, 'manual'),
    async close() {
      await service.close();
      if (!options.database) await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
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
