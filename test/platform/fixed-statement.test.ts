/** platform/fixed-statement.ts: a statement rendered once and bound per call, as a statement or a fragment of one. */
import { sql } from 'drizzle-orm';
import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { openDatabase, queryRows } from '../../src/platform/database.js';
import { fixedInsert, fixedStatement } from '../../src/platform/fixed-statement.js';
import { engines, testDatabase } from '../helpers/databases.js';

const notes = pgTable('fixed_notes', {
  id: text('id').primaryKey(),
  body: jsonb('body').$type<{ words: string[] }>().notNull(),
  tag: text('tag'),
  made: text('made').notNull().default('by default'),
});

const insertNote = fixedInsert(notes, ['id', 'body', 'tag']);
describe.each(engines)('fixed statements on %s', (engine) => {
  it('writes each call its own values, encoded by their columns, with the other columns at their defaults', async () => {
    const scratch = testDatabase(engine);
    const database = await openDatabase(scratch.config);
    try {
      await database.db.execute(sql`CREATE TABLE fixed_notes (id text PRIMARY KEY, body jsonb NOT NULL, tag text, made text NOT NULL DEFAULT 'by default')`);
      // Many calls at once, so every pooled connection runs it (and prepares it, being a write seen again).
      await Promise.all(Array.from({ length: 20 }, (_, i) => database.db.execute(insertNote.bind({ id: `n${i}`, body: { words: ['a', `$${i}`] }, tag: i % 2 ? 'odd' : null }))));
      const rows = await database.db.select().from(notes).orderBy(notes.id);
      expect(rows).toHaveLength(20);
      expect(rows.find((row) => row.id === 'n3')).toEqual({ id: 'n3', body: { words: ['a', '$3'] }, tag: 'odd', made: 'by default' });
      expect(rows.find((row) => row.id === 'n4')).toEqual({ id: 'n4', body: { words: ['a', '$4'] }, tag: null, made: 'by default' });

      // Fragments of a larger statement, each one's values numbered after those before it.
      const copy = fixedStatement<{ copy: string; body: string }>((slot) => sql`INSERT INTO ${notes} (id, body) VALUES (${slot.copy}, ${slot.body}::jsonb)`);
      const both = sql`WITH first AS (${insertNote.bind({ id: 'w1', body: { words: ['w'] }, tag: 'wrapped' })}),
        second AS (${copy.bind({ copy: 'w2', body: '{"words":["copied"]}' })}) SELECT ${'said'}::text AS said`;
      expect(await queryRows(database.db, both)).toEqual([{ said: 'said' }]);
      const written = await database.db.select().from(notes).where(sql`${notes.id} IN ('w1', 'w2')`).orderBy(notes.id);
      expect(written).toEqual([
        { id: 'w1', body: { words: ['w'] }, tag: 'wrapped', made: 'by default' },
        { id: 'w2', body: { words: ['copied'] }, tag: null, made: 'by default' },
      ]);

      // In a transaction: bound the same, and rolled back with it.
      const rolledBack = await database.db
        .transaction(async (tx) => {
          await tx.execute(insertNote.bind({ id: 'tx', body: { words: [] }, tag: null }));
          expect(await tx.select().from(notes).where(sql`${notes.id} = 'tx'`)).toHaveLength(1);
          tx.rollback();
        })
        .catch((error: unknown) => error);
      expect(rolledBack).toBeInstanceOf(Error);
      expect(await database.db.select().from(notes).where(sql`${notes.id} = 'tx'`)).toEqual([]);
    } finally {
      await database.close();
      await scratch.drop();
    }
  });
});

describe('fixed statements refuse', () => {
  it('a value left out, and a text whose parameters are not numbered in order', () => {
    expect(() => insertNote.bind({ id: 'x', body: { words: [] } } as never)).toThrow(/no value for "tag"/);
    const literal = fixedStatement<{ a: string }>((slot) => sql`SELECT ${slot.a}::text, '$1' AS dollar`);
    expect(() => literal.bind({ a: 'x' })).toThrow(/number its parameters in order/);
  });
});
