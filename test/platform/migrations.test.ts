import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/platform/database.js';
import { createScratchDatabase, postgresUrl } from '../helpers/databases.js';

const run = promisify(execFile);
const cli = path.resolve('bin/atrium.js');

describe.runIf(postgresUrl)('migrations on PostgreSQL', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  beforeAll(async () => {
    scratch = await createScratchDatabase();
  });
  afterAll(() => scratch?.drop());

  it('lets four processes starting at once on one empty database all come up', async () => {
    const env = { ...process.env, DATABASE_URL: scratch.url, LOG_LEVEL: 'silent' };
    const starts = Array.from({ length: 4 }, () => run(process.execPath, [cli, 'migrate'], { env }));
    const results = await Promise.allSettled(starts);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);

    const client = new pg.Client({ connectionString: scratch.url });
    await client.connect();
    try {
      for (const schema of ['content', 'org']) {
        const applied = await client.query(`SELECT count(*)::int AS n FROM "${schema}".__drizzle_migrations`);
        const files = (await import('../../drizzle/meta/_journal.json', { with: { type: 'json' } })).default.entries.length;
        expect(applied.rows[0].n).toBe(files);
      }
    } finally {
      await client.end();
    }
  });
});

describe('an embedded database started from a dumped one', () => {
  it('holds what the dump held, with every migration applied, and writes nothing back to it', { timeout: 120_000 }, async () => {
    const config = { dataDir: 'memory://', schema: 'content' };
    const first = await openDatabase(config);
    await first.rows(sql`CREATE TABLE kept (word text)`);
    await first.rows(sql`INSERT INTO kept VALUES ('before the dump')`);
    const client = (first.db as unknown as { $client: PGlite }).$client;
    const dump = await client.dumpDataDir('none');
    await first.close();

    const files = (await import('../../drizzle/meta/_journal.json', { with: { type: 'json' } })).default.entries.length;
    const [a, b] = [await openDatabase({ ...config, startFrom: dump }), await openDatabase({ ...config, startFrom: dump })];
    try {
      await a.rows(sql`INSERT INTO kept VALUES ('in copy a')`);
      expect(await a.rows(sql`SELECT word FROM kept ORDER BY word`)).toEqual([{ word: 'before the dump' }, { word: 'in copy a' }]);
      expect(await b.rows(sql`SELECT word FROM kept`)).toEqual([{ word: 'before the dump' }]);
      expect(await b.rows(sql`SELECT count(*)::int AS n FROM content.__drizzle_migrations`)).toEqual([{ n: files }]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
