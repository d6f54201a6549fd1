/**
 * Once per test run:
 * - one embedded database, migrated as `openDatabase` migrates any, dumped to a file that every in-memory test
 *   database then starts from (helpers/databases.ts), instead of each running PGlite's initdb (about 1.5 s apiece, a
 *   few hundred times a run). Each copy still applies its pending migrations on open.
 * - src/ compiled into dist/ as `npm start` compiles it (bin/compiled.js; nothing when it is current), so every
 *   `atrium` the tests start as a person would runs the tree `npm start` runs, on every run alike. Without it the
 *   children ran through tsx's loader until test/platform/compiled-start compiled dist/ partway through the run:
 *   four of the files that start `atrium` took 125 s (226 s of CPU) through tsx and 100 s (173 s) compiled.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { migrateEmbedded, openPgliteClient } from '../src/platform/database.js';
import { compile } from '../bin/compiled.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The dumped data directory of a migrated embedded database (a tar file). */
    pgliteTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await compile();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-test-template-'));
  const file = path.join(dir, 'pglite.tar');
  const config = { dataDir: 'memory://', schema: 'content' };
  const client = await openPgliteClient(config);
  await migrateEmbedded(client, config);
  const dump = await client.dumpDataDir('none');
  await client.close();
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', file);
  return () => rm(dir, { recursive: true, force: true });
}
