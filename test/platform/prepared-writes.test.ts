/**
 * platform/prepared-writes.ts on a real PostgreSQL server: a write seen again is prepared on the connection (its name
 * in `pg_prepared_statements`), reads and writes seen once are not, every call still answers with its own values,
 * a failed or rolled-back prepared write leaves the next one working, and a connection holds a bounded number.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/platform/database.js';
import { PER_CONNECTION } from '../../src/platform/prepared-writes.js';
import { postgresUrl, testDatabase, type TestDatabase } from '../helpers/databases.js';

describe.skipIf(!postgresUrl)('repeated writes prepared on PostgreSQL', () => {
  let scratch: TestDatabase;
  let database: Database;
  /** The statements a database's one connection has prepared, those naming `table` (each test's own) or all of them. */
  const prepared = async (table: string, on = database) =>
    (await on.rows<{ statement: string }>(sql`SELECT statement FROM pg_prepared_statements`)).map((row) => row.statement).filter((text) => text.includes(table));

  beforeAll(async () => {
    scratch = testDatabase('postgres');
    // One connection, so every statement below runs on the connection the checks read.
    database = await openDatabase(scratch.config, { poolSize: 1 });
  });
  afterAll(async () => {
    await database?.close();
    await scratch?.drop();
  });

  it('prepares a write the second time it is seen, answers each call with its own values, and never prepares a read', async () => {
    await database.db.execute(sql`CREATE TABLE counters (id text PRIMARY KEY, n integer NOT NULL)`);
    const bump = (id: string, by: number) =>
      database.rows<{ n: number }>(sql`INSERT INTO counters (id, n) VALUES (${id}, ${by}) ON CONFLICT (id) DO UPDATE SET n = counters.n + excluded.n RETURNING n`);

    expect(await bump('a', 1)).toEqual([{ n: 1 }]);
    expect(await prepared('counters')).toEqual([]);
    expect(await bump('a', 2)).toEqual([{ n: 3 }]);
    expect(await bump('b', 5)).toEqual([{ n: 5 }]);
    expect(await bump('a', 10)).toEqual([{ n: 13 }]);
    const [statement, ...others] = await prepared('counters');
    expect(statement).toContain('INSERT INTO counters');
    expect(others).toEqual([]);

    const read = () => database.rows<{ n: number }>(sql`SELECT n FROM counters WHERE id = ${'a'}`);
    for (let i = 0; i < 3; i += 1) expect(await read()).toEqual([{ n: 13 }]);
    // A bulk write's text changes with its rows; one over 8,192 characters is never named, however often it runs.
    const rows = Array.from({ length: 1_000 }, (_, i) => sql`(${`bulk-${i}`}, 1)`);
    const bulk = () => database.db.execute(sql`INSERT INTO counters (id, n) VALUES ${sql.join(rows, sql`, `)} ON CONFLICT (id) DO NOTHING`);
    for (let i = 0; i < 3; i += 1) await bulk();
    expect(await prepared('counters')).toEqual([statement]);
  });

  it('a prepared write that fails, or whose transaction rolls back, leaves the next call working, prepared again on the connection that replaced it', async () => {
    await database.db.execute(sql`CREATE TABLE ledger (id text PRIMARY KEY, amount integer NOT NULL CHECK (amount > 0))`);
    const enter = (id: string, amount: number) => database.db.execute(sql`INSERT INTO ledger (id, amount) VALUES (${id}, ${amount})`);
    await enter('one', 1);
    await enter('two', 2);
    expect(await prepared('ledger')).toHaveLength(1);
    const [before] = await database.rows<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid`);

    await expect(enter('two', 3)).rejects.toThrow();
    await expect(enter('three', -1)).rejects.toThrow();
    const rolledBack = await database.db
      .transaction(async (tx) => {
        await tx.execute(sql`INSERT INTO ledger (id, amount) VALUES (${'four'}, ${4})`);
        tx.rollback();
      })
      .catch((error: unknown) => error);
    expect(rolledBack).toBeInstanceOf(Error);
    // pg-pool ends a connection whose statement failed (`release(error)`); the next one prepares the write again.
    await enter('five', 5);
    const [after] = await database.rows<{ pid: number }>(sql`SELECT pg_backend_pid() AS pid`);
    expect(after.pid).not.toBe(before.pid);
    const rows = await database.rows<{ id: string; amount: number }>(sql`SELECT id, amount FROM ledger ORDER BY amount`);
    expect(rows).toEqual([
      { id: 'one', amount: 1 },
      { id: 'two', amount: 2 },
      { id: 'five', amount: 5 },
    ]);
    expect(await prepared('ledger')).toHaveLength(1);
  });

  it(`holds at most ${PER_CONNECTION} prepared writes on a connection; past that, writes run unnamed and still answer`, async () => {
    const own = testDatabase('postgres');
    const fresh = await openDatabase(own.config, { poolSize: 1 });
    try {
      await fresh.db.execute(sql`CREATE TABLE shapes (id text PRIMARY KEY, shape integer NOT NULL)`);
      const shapes = PER_CONNECTION + 10;
      // Each statement its own text (its shape number written into it), each run twice.
      const write = (shape: number) => fresh.db.execute(sql.raw(`INSERT INTO shapes (id, shape) VALUES ('s${shape}-' || gen_random_uuid(), ${shape})`));
      for (let shape = 0; shape < shapes; shape += 1) {
        await write(shape);
        await write(shape);
      }
      const [{ count }] = await fresh.rows<{ count: number }>(sql`SELECT count(*)::int AS count FROM shapes`);
      expect(count).toBe(shapes * 2);
      const held = await prepared('', fresh);
      expect(held).toHaveLength(PER_CONNECTION);
      expect(held.every((statement) => statement.startsWith('INSERT INTO shapes'))).toBe(true);
    } finally {
      await fresh.close();
      await own.drop();
    }
  });
});
