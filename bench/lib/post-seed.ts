/**
 * A million blog posts in minutes for `npm run bench:million`: one INSERT … SELECT over generate_series through
 * a loading connection (content-seed.ts writes its 10,000 richer posts from JavaScript, which at a million would
 * take an hour), then ANALYZE.
 *
 * The text is made of org-seed.ts's made-up words, skewed the same way (a few words everywhere, most rare): a
 * six-word title, a twelve-word description and a 40-word body (about 300 characters; real posts are longer,
 * which would only make the trigram index bigger, not the plans different). One post in 277 mentions a common
 * word and three a rare one, as in content-seed.ts; one in 50 is a draft. `published_at` is unique per post.
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/platform/database.js';
import { VOCABULARY_SIZE, vocabulary } from './org-seed.js';

export interface PostSeedFacts {
  posts: number;
  seconds: number;
  /** A word in about one post in 277, and one in three posts. Neither is in the vocabulary. */
  search: { common: string; rare: string };
}

const COMMON_WORD = 'observability';
const RARE_WORD = 'flamegraph';
const TITLE_WORDS = 6;
const DESCRIPTION_WORDS = 12;
const BODY_WORDS = 40;

export async function seedPosts(database: Database, count: number): Promise<PostSeedFacts> {
  const started = performance.now();
  const vocab = sql.raw(`ARRAY[${vocabulary().map((word) => `'${word}'`).join(',')}]::text[]`);
  const pick = (words: number) =>
    sql.raw(`(SELECT string_agg(v.vocab[1 + floor(power(random(), 2) * ${VOCABULARY_SIZE})::int + 0 * i], ' ') FROM generate_series(1, ${words}) AS i WHERE g > 0)`);
  const total = sql.raw(String(count));
  // As org-seed.ts does for memory: the trigram index is built far faster in one pass than row by row.
  const ginIndexes = await database.rows<{ name: string; definition: string }>(
    sql`SELECT indexname AS name, indexdef AS definition FROM pg_indexes
        WHERE schemaname = current_schema() AND tablename = 'blog_posts' AND indexdef LIKE '%USING gin%'`,
  );
  for (const index of ginIndexes) await database.db.execute(sql.raw(`DROP INDEX "${index.name}"`));
  await database.db.execute(sql`
    INSERT INTO blog_posts (slug, title, description, content, author_name, tags, status, published_at, created_at, updated_at)
    SELECT 'bench-post-' || g, initcap(${pick(TITLE_WORDS)}), initcap(${pick(DESCRIPTION_WORDS)}) || '.',
           ${pick(BODY_WORDS)} || CASE WHEN g % 277 = 13 THEN ${` ${COMMON_WORD}`} WHEN g IN (1234, 5678, 9012) THEN ${` ${RARE_WORD}`} ELSE '' END || '.',
           'The Atrium Team', ARRAY[v.vocab[1 + g % 30], v.vocab[1 + (g * 7) % 30]],
           CASE WHEN g % 50 = 0 THEN 'draft' ELSE 'published' END,
           CASE WHEN g % 50 = 0 THEN NULL ELSE now() - (${total} - g) * interval '1 minute' END,
           now() - (${total} - g) * interval '1 minute', now() - (${total} - g) * interval '1 minute'
    FROM generate_series(1, ${total}) AS g, (SELECT ${vocab} AS vocab) AS v
  `);
  // A GIN build sorts its entries in maintenance_work_mem (64 MB by default): a million rows' lexemes and trigrams
  // spill to disk many times over. The loading connection is the benchmark's own (loading-database.ts).
  if (database.engine === 'postgres') await database.db.execute(sql`SET maintenance_work_mem = '512MB'`);
  for (const index of ginIndexes) await database.db.execute(sql.raw(index.definition));
  await database.db.execute(sql`VACUUM ANALYZE blog_posts`);
  return { posts: count, seconds: Math.round((performance.now() - started) / 100) / 10, search: { common: COMMON_WORD, rare: RARE_WORD } };
}
