/**
 * The change feed (platform/changes.ts) and the read cache that follows it (platform/read-cache.ts), on a real
 * database of each engine: notices arrive only when their transaction commits, reach other listeners of the
 * same database, and caches serve nothing while the listener is down.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import Fastify from 'fastify';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChangeFeed, transact, type ChangeEvent } from '../../src/platform/changes.js';
import { openDatabase, type Database } from '../../src/platform/database.js';
import { ReadCache } from '../../src/platform/read-cache.js';
import { engines, postgresUrl, testDatabase, type TestDatabase } from '../helpers/databases.js';

/** Fastify's logger without output. */
const log = Fastify({ logger: false }).log;

/** Notifications cross a connection on PostgreSQL: wait for at most a second. */
async function eventually(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 1000;
  while (!check() && Date.now() < deadline) await sleep(5);
}

function record(feed: ChangeFeed): ChangeEvent[] {
  const events: ChangeEvent[] = [];
  feed.subscribe((event) => events.push(event));
  return events;
}

describe.each(engines)('change feed on %s', (engine) => {
  let testDb: TestDatabase;
  let database: Database;
  /** Two feeds on one database stand for two processes. */
  let writer: ChangeFeed;
  let reader: ChangeFeed;
  beforeAll(async () => {
    testDb = testDatabase(engine);
    database = await openDatabase(testDb.config);
    writer = await ChangeFeed.open(database, { log });
    reader = await ChangeFeed.open(database, { log });
  });
  afterAll(async () => {
    await writer?.close();
    await reader?.close();
    await database?.close();
    await testDb?.drop();
  });

  it('is live once listening', () => {
    expect(writer.live).toBe(true);
    expect(reader.live).toBe(true);
  });

  it('tells other listeners of a committed change, and this process right after the commit', async () => {
    const heardHere = record(writer);
    const heardThere = record(reader);
    let heardHereBeforeCommit = -1;
    await transact(database.db, writer, async (_tx, changed) => {
      changed({ kind: 'blog', key: 'hello-world' });
      changed({ kind: 'blog', key: 'second' });
      await sleep(20);
      heardHereBeforeCommit = heardHere.length;
    });
    expect(heardHereBeforeCommit).toBe(0);
    const expected = { type: 'changed', changes: [{ kind: 'blog', key: 'hello-world' }, { kind: 'blog', key: 'second' }] };
    expect(heardHere).toEqual([expected]);
    await eventually(() => heardThere.length > 0);
    expect(heardThere).toEqual([expected]);
    // The writer's own notification came back too, and was recognised as already delivered.
    await sleep(50);
    expect(heardHere).toHaveLength(1);
  });

  it('has heard every change committed elsewhere before caughtUp() resolves, for every caller at once', async () => {
    const heardThere = record(reader);
    for (let n = 0; n < 25; n++) {
      await transact(database.db, writer, async (_tx, changed) => changed({ kind: 'fence', key: `one-${n}` }));
      await reader.caughtUp();
      expect(heardThere.at(-1)).toEqual({ type: 'changed', changes: [{ kind: 'fence', key: `one-${n}` }] });
    }
    // Many callers at once share round trips, and each has heard what committed before it asked.
    for (let n = 0; n < 5; n++) {
      await transact(database.db, writer, async (_tx, changed) => changed({ kind: 'fence', key: `many-${n}` }));
      const seen = await Promise.all(Array.from({ length: 40 }, async () => (await reader.caughtUp(), heardThere.length)));
      expect(heardThere.at(-1)).toEqual({ type: 'changed', changes: [{ kind: 'fence', key: `many-${n}` }] });
      expect(seen.every((count) => count === heardThere.length)).toBe(true);
    }
  });

  it('says nothing of a rolled-back change', async () => {
    const heardThere = record(reader);
    const heardHere = record(writer);
    await expect(
      transact(database.db, writer, async (_tx, changed) => {
        changed({ kind: 'blog', key: 'never-happened' });
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    // A later change proves the channel works and that nothing arrived before it.
    await transact(database.db, writer, async (_tx, changed) => changed({ kind: 'roadmap' }));
    await eventually(() => heardThere.length > 0);
    expect(heardThere).toEqual([{ type: 'changed', changes: [{ kind: 'roadmap' }] }]);
    expect(heardHere).toEqual([{ type: 'changed', changes: [{ kind: 'roadmap' }] }]);
  });

  it('announces nothing when nothing was reported', async () => {
    const heardThere = record(reader);
    await transact(database.db, writer, async () => undefined);
    await transact(database.db, writer, async (_tx, changed) => changed({ kind: 'marker' }));
    await eventually(() => heardThere.length > 0);
    expect(heardThere).toEqual([{ type: 'changed', changes: [{ kind: 'marker' }] }]);
  });

  it('announces a large batch by kind, within the notification size limit', async () => {
    const heardThere = record(reader);
    await transact(database.db, writer, async (_tx, changed) => {
      for (let n = 0; n < 500; n++) changed({ kind: 'roadmap', key: `item-with-a-long-slug-number-${n}` });
    });
    await eventually(() => heardThere.length > 0);
    expect(heardThere).toEqual([{ type: 'changed', changes: [{ kind: 'roadmap' }] }]);
  });

  it('drops cached reads of the changed kind, keeps others, and never stores a read that raced a change', async () => {
    const posts = new ReadCache<string>({ maxAgeMs: 60_000, maxEntries: 100 }).follow(reader, { kinds: ['blog'] });
    expect(await posts.read('list', async () => 'v1')).toBe('v1');
    expect(await posts.read('list', async () => 'v2')).toBe('v1');

    await transact(database.db, writer, async (_tx, changed) => changed({ kind: 'roadmap' }));
    await sleep(50);
    expect(await posts.read('list', async () => 'v2')).toBe('v1');

    await transact(database.db, writer, async (_tx, changed) => changed({ kind: 'blog', key: 'x' }));
    await eventually(() => posts.size === 0);
    expect(await posts.read('list', async () => 'v3')).toBe('v3');

    // A read that began before a change and ends after it may hold the old data: it is answered, not kept.
    let finishLoad!: (value: string) => void;
    posts.clear();
    const racing = posts.read('list', () => new Promise<string>((resolve) => (finishLoad = resolve)));
    const generation = posts.generation;
    await transact(database.db, writer, async (_tx, changed) => changed({ kind: 'blog' }));
    await eventually(() => posts.generation > generation);
    expect(posts.generation).toBeGreaterThan(generation);
    finishLoad('old');
    expect(await racing).toBe('old');
    expect(await posts.read('list', async () => 'new')).toBe('new');
  });

  it('drops only the changed key from a cache keyed by record', async () => {
    const sessions = new ReadCache<string>({ maxAgeMs: 60_000, maxEntries: 100 }).follow(reader, { kinds: ['session'], byKey: true });
    await sessions.read('a', async () => 'session a');
    await sessions.read('b', async () => 'session b');
    await transact(database.db, writer, async (_tx, changed) => changed({ kind: 'session', key: 'a' }));
    await eventually(() => sessions.size === 1);
    expect(await sessions.read('a', async () => undefined)).toBeUndefined();
    expect(await sessions.read('b', async () => 'reloaded')).toBe('session b');
  });
});

describe.skipIf(!postgresUrl)('change feed when its PostgreSQL connection is lost', () => {
  let testDb: TestDatabase;
  let database: Database;
  let feed: ChangeFeed | undefined;
  let other: ChangeFeed | undefined;
  beforeAll(async () => {
    testDb = testDatabase('postgres');
    database = await openDatabase(testDb.config);
  });
  afterEach(async () => {
    await feed?.close();
    await other?.close();
  });
  afterAll(async () => {
    await database?.close();
    await testDb?.drop();
  });

  /** What a database restart or a network failure does to the LISTEN connection. */
  async function killListener(): Promise<number> {
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    try {
      const result = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
        `atrium-changes:${testDb.config.schema}`,
      ]);
      return result.rowCount ?? 0;
    } finally {
      await admin.end();
    }
  }

  it('stops serving cached reads until it listens again, and drops what it had', async () => {
    feed = await ChangeFeed.open(database, { log, minRetryMs: 500 });
    const events = record(feed);
    const cache = new ReadCache<string>({ maxAgeMs: 60_000, maxEntries: 10 }).follow(feed, { kinds: ['blog'] });
    await cache.read('list', async () => 'before');

    expect(await killListener()).toBe(1);
    await eventually(() => !feed!.live);
    expect(feed.live).toBe(false);
    expect(events).toEqual([{ type: 'reset' }]);
    expect(cache.size).toBe(0);
    // While nobody listens a change could pass unheard: every read goes to the source, nothing is kept.
    expect(await cache.read('list', async () => 'while down')).toBe('while down');
    expect(await cache.read('list', async () => 'still down')).toBe('still down');
    expect(cache.size).toBe(0);

    const deadline = Date.now() + 3000;
    while (!feed.live && Date.now() < deadline) await sleep(20);
    expect(feed.live).toBe(true);
    expect(events).toEqual([{ type: 'reset' }, { type: 'reset' }]);
    expect(await cache.read('list', async () => 'after')).toBe('after');
    expect(await cache.read('list', async () => 'cached again')).toBe('after');

    // And it hears other processes' changes again.
    other = await ChangeFeed.open(database, { log });
    await transact(database.db, other, async (tx, changed) => {
      await tx.execute(sql`SELECT 1`);
      changed({ kind: 'blog' });
    });
    await eventually(() => cache.size === 0);
    expect(cache.size).toBe(0);
  });
});
