/**
 * The databases every domain and end-to-end test runs against: the embedded PGlite (in memory) and,
 * when TEST_DATABASE_URL is set (CI sets it), a real PostgreSQL server in a schema of its own that is
 * dropped afterwards, so runs never collide.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { sql, type SQL } from 'drizzle-orm';
import { inject } from 'vitest';
import type { DatabaseConfig } from '../../src/config.js';
import { dropSchema } from '../../src/platform/database.js';

export type Engine = 'pglite' | 'postgres';

export const postgresUrl = process.env.TEST_DATABASE_URL;

export const engines: Engine[] = postgresUrl ? ['pglite', 'postgres'] : ['pglite'];
if (!postgresUrl) console.warn('TEST_DATABASE_URL is not set: tests run on the embedded database only');

export interface TestDatabase {
  config: DatabaseConfig;
  drop(): Promise<void>;
}

export function uniqueName(prefix = 't'): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** The migrated embedded database every in-memory one starts from (test/global-setup.ts), read once per worker. */
let template: Blob | undefined;
const pgliteTemplate = () => (template ??= new Blob([readFileSync(inject('pgliteTemplate'))]));

/** A fresh, empty database of the given engine. */
export function testDatabase(engine: Engine): TestDatabase {
  if (engine === 'pglite') return { config: { dataDir: 'memory://', schema: 'content', startFrom: pgliteTemplate() }, drop: async () => {} };
  if (!postgresUrl) throw new Error('TEST_DATABASE_URL is not set');
  const schema = uniqueName();
  return { config: { url: postgresUrl, dataDir: '', schema }, drop: () => dropSchema(postgresUrl, schema) };
}

/** A whole fresh PostgreSQL database (for tests of several processes with the default schema names). */
export async function createScratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (!postgresUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = uniqueName('atrium');
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/**
 * How many PostgreSQL backends wait behind `pid`'s locks: the first in line waits on it, the next on the first.
 * For tests that hold a row locked until the code under test has reached a given write.
 */
export function waitingBehind(pid: number): SQL {
  return sql`WITH first AS (SELECT pid FROM pg_stat_activity WHERE ${pid} = ANY(pg_blocking_pids(pid)))
    SELECT count(*)::int AS n FROM pg_stat_activity AS waiting
    WHERE waiting.pid IN (SELECT pid FROM first) OR pg_blocking_pids(waiting.pid) && ARRAY(SELECT pid FROM first)`;
}
