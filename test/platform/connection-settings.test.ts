/**
 * platform/database.ts: what every pooled PostgreSQL connection is set to, whatever the server's defaults — its
 * schema first on the search path, UTC, and no JIT (short statements only: a JIT compile costs more than any of
 * them runs). The embedded database has no JIT and one connection set up when it opens.
 */
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/platform/database.js';
import { postgresUrl, testDatabase } from '../helpers/databases.js';

describe.runIf(postgresUrl)('a PostgreSQL connection of the pool', () => {
  it('runs in its schema, in UTC, without JIT, on every connection', async () => {
    const scratch = testDatabase('postgres');
    const database = await openDatabase(scratch.config);
    try {
      // As many at once as the pool holds, so that each of its connections answers.
      const settings = await Promise.all(
        Array.from({ length: 10 }, () =>
          database.rows<{ jit: string; zone: string; schema: string }>(sql`SELECT current_setting('jit') AS jit, current_setting('TimeZone') AS zone, current_schema() AS schema, pg_sleep(0.05)`),
        ),
      );
      for (const [row] of settings) expect(row).toMatchObject({ jit: 'off', zone: 'UTC', schema: scratch.config.schema });
    } finally {
      await database.close();
      await scratch.drop();
    }
  });
});
