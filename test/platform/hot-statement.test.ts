/** platform/database.ts `hotStatement`: a named statement prepared once per database, answering as the plain one. */
import { eq, sql } from 'drizzle-orm';
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { hotStatement, openDatabase } from '../../src/platform/database.js';
import { engines, testDatabase } from '../helpers/databases.js';

const notes = pgTable('hot_notes', { id: text('id').primaryKey(), count: integer('count').notNull() });
const findNote = hotStatement('find_hot_note', (db) => db.select().from(notes).where(eq(notes.id, sql.placeholder('id'))));

describe.each(engines)('hotStatement on %s', (engine) => {
  it('answers each call with its own values from its own database, and inside a transaction reads what the transaction wrote', async () => {
    const scratch = testDatabase(engine);
    const database = await openDatabase(scratch.config);
    try {
      await database.db.execute(sql`CREATE TABLE hot_notes (id text PRIMARY KEY, count integer NOT NULL)`);
      await database.db.insert(notes).values([{ id: 'a', count: 1 }, { id: 'b', count: 2 }]);
      // Many calls, so that every pooled connection has prepared it and still answers with the values given.
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => findNote(database.db, { id: i % 2 ? 'b' : 'a' })));
      expect(answers.map(([row]) => row.count)).toEqual(Array.from({ length: 30 }, (_, i) => (i % 2 ? 2 : 1)));
      expect(await findNote(database.db, { id: 'none' })).toEqual([]);

      // Prepared per database: another database answers from its own table.
      const otherScratch = testDatabase(engine);
      const other = await openDatabase(otherScratch.config);
      try {
        await other.db.execute(sql`CREATE TABLE hot_notes (id text PRIMARY KEY, count integer NOT NULL)`);
        await other.db.insert(notes).values({ id: 'a', count: 10 });
        expect(await findNote(other.db, { id: 'a' })).toEqual([{ id: 'a', count: 10 }]);
        expect(await findNote(database.db, { id: 'a' })).toEqual([{ id: 'a', count: 1 }]);
      } finally {
        await other.close();
        await otherScratch.drop();
      }

      let seen: unknown;
      const rolledBack = await database.db
        .transaction(async (tx) => {
          await tx.insert(notes).values({ id: 'c', count: 3 });
          seen = await findNote(tx, { id: 'c' });
          tx.rollback();
        })
        .catch((error: unknown) => error);
      expect(rolledBack).toBeInstanceOf(Error);
      expect(seen).toEqual([{ id: 'c', count: 3 }]);
      expect(await findNote(database.db, { id: 'c' })).toEqual([]);
    } finally {
      await database.close();
      await scratch.drop();
    }
  });
});
