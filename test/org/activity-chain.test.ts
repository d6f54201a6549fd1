/**
 * The activity log's hash chain: entries written by concurrent transactions are sealed in commit order, an
 * entry written in a transaction that rolls back never appears, and `atrium activity verify` names an edited
 * or deleted entry.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/platform/database.js';
import { sealActivity, verifyActivity } from '../../src/org/activity/chain.js';
import { listActivity, recordActivity } from '../../src/org/activity/records.js';
import { orgActivity } from '../../src/org/schema.js';
import { withTraceparent } from '../../src/platform/trace.js';
import { createScratchDatabase, engines } from '../helpers/databases.js';
import { runCli } from '../helpers/run-cli.js';

const TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe.each(engines)('the activity chain on %s', (engine) => {
  let dir: string;
  let env: Record<string, string>;
  let database: Database;
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-activity-'));
    env = { ATRIUM_DATA_DIR: path.join(dir, 'data') };
    if (engine === 'postgres') {
      const scratch = await createScratchDatabase();
      env.ORG_DATABASE_URL = scratch.url;
      dropDatabase = scratch.drop;
    }
    database = await openDatabase(loadConfig({ ...process.env, ...env }, false).org.database);
  });
  afterAll(async () => {
    await database?.close();
    await dropDatabase?.();
    await rm(dir, { recursive: true, force: true });
  });

  it('seals what committed, in order, keeps the trace, and never records what rolled back', async () => {
    const { db } = database;
    await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        db.transaction((tx) => recordActivity(tx, { kind: 'memory.written', summary: `item ${index}`, spaceId: 'spc_a', details: { index, nested: { b: 1, a: [2, 3] } } })),
      ),
    );
    await withTraceparent(TRACE, () => db.transaction((tx) => recordActivity(tx, { kind: 'tool.called', summary: 'traced call', personId: 'per_1' })));
    await expect(
      db.transaction(async (tx) => {
        await recordActivity(tx, { kind: 'memory.written', summary: 'rolled back' });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');

    expect(await sealActivity(db)).toBe(21);
    const rows = await db.select().from(orgActivity).orderBy(orgActivity.position);
    expect(rows.map((row) => row.position)).toEqual(Array.from({ length: 21 }, (_, index) => index + 1));
    expect(rows.every((row, index) => index === 0 || row.prevHash === rows[index - 1].hash)).toBe(true);
    expect(rows.some((row) => row.summary === 'rolled back')).toBe(false);
    expect(rows.find((row) => row.summary === 'traced call')?.traceparent).toBe(TRACE);

    const report = await verifyActivity(db);
    expect(report).toMatchObject({ entries: 21, problems: [], head: { position: 21, hash: rows[20].hash } });
    // A person sees the entries of their spaces and their own; nobody else's.
    const own = await listActivity(db, { all: false, personId: 'per_1', spaceIds: [] }, {}, { limit: 50 });
    expect(own.rows.map((row) => row.summary)).toEqual(['traced call']);
    const firstPage = await listActivity(db, { all: false, personId: 'per_2', spaceIds: ['spc_a'] }, {}, { limit: 15 });
    const secondPage = await listActivity(db, { all: false, personId: 'per_2', spaceIds: ['spc_a'] }, {}, { limit: 15, before: firstPage.next! });
    expect([...firstPage.rows, ...secondPage.rows].map((row) => row.summary).sort()).toEqual(Array.from({ length: 20 }, (_, index) => `item ${index}`).sort());
    expect(secondPage.next).toBeNull();
  });

  it('names an edited entry and a deleted one, through `atrium activity verify`', { timeout: 120_000 }, async () => {
    const { db } = database;
    const rows = await db.select().from(orgActivity).orderBy(orgActivity.position);
    await db.update(orgActivity).set({ summary: 'nothing to see' }).where(eq(orgActivity.seq, rows[4].seq));
    await db.delete(orgActivity).where(sql`${orgActivity.position} IN (10, 11)`);
    await database.close();

    const result = await runCli(['activity', 'verify'], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`activity log TAMPERED: 2 problem(s) in 19 entries`);
    expect(result.stdout).toContain(`position 5: entry ${rows[4].seq} was changed after it was written`);
    expect(result.stdout).toContain('position 10: the entries at positions 10–11 are missing (deleted)');

    database = await openDatabase(loadConfig({ ...process.env, ...env }, false).org.database);
    await database.db.update(orgActivity).set({ summary: rows[4].summary }).where(eq(orgActivity.seq, rows[4].seq));
    await database.db.insert(orgActivity).values(rows.slice(9, 11));
    await database.close();
    const restored = await runCli(['activity', 'verify'], env);
    expect(restored.stdout).toContain(`activity log intact: 21 entries; head: position 21, hash ${rows[20].hash}`);
    expect(restored.code).toBe(0);
    database = await openDatabase(loadConfig({ ...process.env, ...env }, false).org.database);
  });
});
