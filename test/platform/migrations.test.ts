import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
