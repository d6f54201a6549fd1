/**
 * A first start prepares every new embedded directory with one initdb (database.ts `prepareDatabases`): the
 * first new directory's cluster is copied to the others before each gets its own schema. Each directory must
 * still be a database of its own, fully migrated; one that exists is left as it is; a copy cut short (no
 * PG_VERSION, which is copied last) is prepared again; and a service on PostgreSQL has nothing to prepare.
 */
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsFolder, openDatabase, prepareDatabases } from '../../src/platform/database.js';
import { postgresUrl } from '../helpers/databases.js';

const journal = JSON.parse(await readFile(path.join(migrationsFolder, 'meta/_journal.json'), 'utf8')) as { entries: unknown[] };

describe('preparing new embedded databases', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'atrium-prepare-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** The schemas of ours in the database in `dataDir`, and how many migrations its own schema records. */
  async function inside(dataDir: string, schema: string) {
    const database = await openDatabase({ dataDir, schema });
    try {
      const schemas = await database.rows<{ nspname: string }>(sql`SELECT nspname FROM pg_namespace WHERE nspname IN ('content', 'org') ORDER BY nspname`);
      const [{ count }] = await database.rows<{ count: number }>(sql`SELECT count(*)::int AS count FROM ${sql.identifier(schema)}.__drizzle_migrations`);
      const marks = await database.rows<{ mark: string }>(sql`SELECT mark FROM public.prepare_test`).catch(() => []);
      return { schemas: schemas.map((row) => row.nspname), migrations: count, marks: marks.map((row) => row.mark) };
    } finally {
      await database.close();
    }
  }

  it('makes two databases of their own from one initdb, each with only its schema and every migration', { timeout: 120_000 }, async () => {
    const content = path.join(root, 'two', 'content');
    const org = path.join(root, 'two', 'org');
    await prepareDatabases([
      { dataDir: content, schema: 'content' },
      { dataDir: org, schema: 'org' },
    ]);
    expect(await inside(content, 'content')).toEqual({ schemas: ['content'], migrations: journal.entries.length, marks: [] });
    expect(await inside(org, 'org')).toEqual({ schemas: ['org'], migrations: journal.entries.length, marks: [] });
  });

  // The two tests below start from the directories the first one made.
  it('leaves a directory that exists as it is, and prepares the new one beside it from its own initdb', { timeout: 120_000 }, async () => {
    const kept = path.join(root, 'two', 'content');
    const database = await openDatabase({ dataDir: kept, schema: 'content' });
    await database.rows(sql`CREATE TABLE public.prepare_test (mark text)`);
    await database.rows(sql`INSERT INTO public.prepare_test VALUES ('kept')`);
    await database.close();

    const added = path.join(root, 'added', 'org');
    await prepareDatabases([
      { dataDir: kept, schema: 'content' },
      { dataDir: added, schema: 'org' },
    ]);
    expect(await inside(kept, 'content')).toEqual({ schemas: ['content'], migrations: journal.entries.length, marks: ['kept'] });
    // Not a copy of the existing one: no content schema, no mark.
    expect(await inside(added, 'org')).toEqual({ schemas: ['org'], migrations: journal.entries.length, marks: [] });
  });

  it('prepares again a directory whose copy was cut short before its PG_VERSION', { timeout: 120_000 }, async () => {
    const cutShort = path.join(root, 'cut', 'org');
    await cp(path.join(root, 'two', 'content'), cutShort, { recursive: true, filter: (source) => path.basename(source) !== 'PG_VERSION' });
    expect(existsSync(path.join(cutShort, 'PG_VERSION'))).toBe(false);
    await prepareDatabases([{ dataDir: cutShort, schema: 'org' }]);
    expect(await inside(cutShort, 'org')).toEqual({ schemas: ['org'], migrations: journal.entries.length, marks: [] });
  });

  it.runIf(postgresUrl)('has nothing to prepare for a service on PostgreSQL', async () => {
    const unused = path.join(root, 'postgres', 'content');
    await prepareDatabases([{ url: postgresUrl, dataDir: unused, schema: 'content' }]);
    expect(existsSync(unused)).toBe(false);
  });
});
