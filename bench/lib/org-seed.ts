/**
 * Company memory for the org benchmarks, loaded by one bulk INSERT … SELECT over generate_series through the
 * service's own database handle (not tool calls), then VACUUM ANALYZE, as autovacuum would soon do.
 *
 * The words are made up (two or three syllables: `kalomi`, `tesunari`), drawn from a vocabulary of 5,000 with
 * a skewed distribution (word i of the vocabulary is picked with probability ∝ 1/√i), so a few words are
 * everywhere and most are rare, as in real text. Each item has a five-word title, a 45-word body, two tags of
 * 40, one of the three kinds, and a unique `recorded_at` one second apart.
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/platform/database.js';
import { RECENT_WINDOW } from '../../src/org/memory/search.js';

export interface MemorySeedOptions {
  count: number;
  spaceId: string;
  person: { id: string; name: string };
}

export interface MemorySeedFacts {
  count: number;
  seconds: number;
  /** Words that occur in roughly 1 % of the items: typical one-word searches. */
  midWords: string[];
  /** The item ids are `mem_bench_<n>` for n in 1..count. */
  idPrefix: string;
}

export const VOCABULARY_SIZE = 5_000;
const BODY_WORDS = 45;
const TITLE_WORDS = 5;

/** The same vocabulary on every run: syllables combined in a fixed order. */
export function vocabulary(): string[] {
  const consonants = 'bdfgklmnprstvz';
  const vowels = 'aeiou';
  const syllables = [...consonants].flatMap((c) => [...vowels].map((v) => c + v));
  const words = new Set<string>();
  for (let i = 0; words.size < VOCABULARY_SIZE; i++) {
    const a = syllables[i % syllables.length];
    const b = syllables[Math.floor(i / syllables.length) % syllables.length];
    const c = i >= syllables.length ** 2 ? syllables[(i * 7) % syllables.length] : '';
    words.add(a + b + c + (i % 3 === 0 ? 'n' : ''));
  }
  return [...words];
}

/**
 * The queries search_memory is timed with one call at a time, `count` different ones of each kind: a word of about
 * 1 % of the items (from the 1,000 words from the 600th on: 1.3–0.8 % each, nearest the thousandth first), two such
 * words, and part of a word (a made-up word without its first letter is no word, since every word starts with a
 * consonant: full-text search finds nothing and the trigram fallback answers). Every call a query of its own:
 * search_memory keeps a page a second (src/org/read-cache.ts), and the same queries again within that second would
 * time that cache instead.
 */
export function searchQueries(count: number): Array<{ label: string; queries: string[] }> {
  const words = vocabulary();
  const nearest = Array.from({ length: 1_000 }, (_, k) => 600 + k).sort((a, b) => Math.abs(a - 1_000) - Math.abs(b - 1_000));
  const oneWord = nearest.map((index) => words[index]);
  const fragments = [...new Set(words.slice(200, 4_900).map((word) => word.slice(1)))];
  if (count > fragments.length) throw new Error(`search_memory: at most ${fragments.length} different queries of each kind, not ${count}`);
  return [
    { label: 'one word (~1 % of items)', queries: oneWord.slice(0, count) },
    { label: 'two words', queries: oneWord.slice(0, count).map((word, i) => `${word} ${oneWord[(i + 7) % oneWord.length]}`) },
    { label: 'part of a word (trigram fallback)', queries: fragments.slice(0, count) },
  ];
}

export async function seedMemory(database: Database, options: MemorySeedOptions): Promise<MemorySeedFacts> {
  const started = performance.now();
  const words = vocabulary();
  const vocab = sql.raw(`ARRAY[${words.map((word) => `'${word}'`).join(',')}]::text[]`);
  const tags = sql.raw(`ARRAY[${words.slice(100, 140).map((word) => `'${word}'`).join(',')}]::text[]`);
  // random()^2 over the vocabulary's indexes: index i is picked with probability ∝ 1/√i. The aggregate names the
  // inner series (`0 * i`) so it belongs to the subquery, and `g > 0` makes the subquery run again for each row.
  const pick = (count: number) =>
    sql.raw(`(SELECT string_agg(v.vocab[1 + floor(power(random(), 2) * ${VOCABULARY_SIZE})::int + 0 * i], ' ') FROM generate_series(1, ${count}) AS i WHERE g > 0)`);
  // GIN indexes are built far faster in one pass than row by row (each row adds ~50 lexemes and a few hundred
  // trigrams): drop them for the load and create them again exactly as they were.
  const ginIndexes = await database.rows<{ name: string; definition: string }>(
    sql`SELECT indexname AS name, indexdef AS definition FROM pg_indexes
        WHERE schemaname = current_schema() AND tablename = 'memory_items' AND indexdef LIKE '%USING gin%'`,
  );
  for (const index of ginIndexes) await database.db.execute(sql.raw(`DROP INDEX "${index.name}"`));
  // memory_recent's trigger would copy all of them there (a GIN entry at a time) and trim all but the newest:
  // the load fills it once at the end instead, as drizzle/0009 filled it from the items already there.
  await database.db.execute(sql`ALTER TABLE memory_items DISABLE TRIGGER memory_recent_kept`);
  await database.db.execute(sql`
    INSERT INTO memory_items (id, kind, title, body, tags, space_id, lineage_id, recorded_by_type, recorded_by_id,
                              recorded_by_name, client_id, recorded_at)
    SELECT 'mem_bench_' || g, (ARRAY['fact', 'decision', 'instruction'])[1 + g % 3],
           initcap(${pick(TITLE_WORDS)}), ${pick(BODY_WORDS)} || '.',
           jsonb_build_array(v.tags[1 + g % 40], v.tags[1 + (g * 7) % 40]),
           ${options.spaceId}, 'mem_bench_' || g, 'person', ${options.person.id}, ${options.person.name}, NULL,
           now() - (${sql.raw(String(options.count))} - g) * interval '1 second'
    FROM generate_series(1, ${sql.raw(String(options.count))}) AS g, (SELECT ${vocab} AS vocab, ${tags} AS tags) AS v
  `);
  // A GIN build sorts its entries in maintenance_work_mem (64 MB by default): a million rows' lexemes and trigrams
  // spill to disk many times over. The loading connection is the benchmark's own (loading-database.ts).
  if (database.engine === 'postgres') await database.db.execute(sql`SET maintenance_work_mem = '512MB'`);
  for (const index of ginIndexes) await database.db.execute(sql.raw(index.definition));
  await database.db.execute(sql`DELETE FROM memory_recent WHERE space_id = ${options.spaceId}`);
  await database.db.execute(sql`
    INSERT INTO memory_recent (item_id, space_id, recorded_at, search)
    SELECT id, space_id, recorded_at, search FROM memory_items WHERE space_id = ${options.spaceId}
    ORDER BY recorded_at DESC LIMIT ${sql.raw(String(RECENT_WINDOW))}`);
  await database.db.execute(sql`ALTER TABLE memory_items ENABLE TRIGGER memory_recent_kept`);
  // VACUUM too, as autovacuum soon would: otherwise the first searches set hint bits on every page they read
  // (writes that belong to the load, not to the search), and bitmap scans cannot skip all-visible pages.
  for (const table of ['memory_items', 'memory_recent']) await database.db.execute(sql.raw(`${database.engine === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE'} ${table}`));
  return {
    count: options.count,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    // Picked with probability ≈ 1/(2√(i·V)) per word: about 1 % of 45-word bodies for i around 1,000.
    midWords: words.slice(800, 1_200).filter((_, i) => i % 20 === 0),
    idPrefix: 'mem_bench_',
  };
}
