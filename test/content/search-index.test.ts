/**
 * Search must stay fast at 10,000 posts: the substring match has to be answered from the
 * trigram indexes, not by reading every post. These tests EXPLAIN the exact queries search runs.
 */
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchContent, searchQuery } from '../../src/content/search.js';
import { SEARCH_TYPES } from '../../src/content/contract.js';
import { startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

const POSTS = 10_000;
const OTHERS = 2_000;
const INDEXES = { blog: 'blog_posts_search_idx', changelog: 'changelog_entries_search_idx', roadmap: 'roadmap_items_search_idx' };
const fingerprint = (n: number) => createHash('md5').update(String(n)).digest('hex');

describe.each(engines)('search indexes on %s', (engine) => {
  let content: TestContent;
  let definitions: Array<{ indexdef: string }>;

  beforeAll(async () => {
    content = await startContent(engine);
    const { db, database } = content.service.ctx;
    // Loading is much faster with the search indexes built afterwards, from their own definitions.
    definitions = await database.rows<{ indexdef: string }>(
      sql`SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname IN (${sql.join(Object.values(INDEXES).map((name) => sql`${name}`), sql`, `)})`,
    );
    expect(definitions).toHaveLength(3);
    for (const name of Object.values(INDEXES)) await db.execute(sql.raw(`DROP INDEX ${name}`));
    await db.execute(sql`
      INSERT INTO blog_posts (slug, title, description, content, author_name, status, published_at)
      SELECT 'scale-' || g,
             'Post ' || g || ' about ' || (ARRAY['postgres', 'fastify', 'typescript', 'search', 'roadmaps'])[1 + g % 5],
             'A description of post ' || g || ', long enough to pass for a real search-engine description.',
             repeat('Lorem ipsum dolor sit amet, consectetur adipiscing elit. ', 8) || md5(g::text),
             'Team', 'published', now() - g * interval '1 minute'
      FROM generate_series(1, ${POSTS}) AS g`);
    await db.execute(sql`
      INSERT INTO changelog_entries (slug, version, title, summary, content, status, published_at)
      SELECT 'v1-' || g || '-0', 'v1.' || g || '.0', 'Release v1.' || g || '.0', 'Fixes and features of release ' || g,
             repeat('Improved performance and fixed bugs. ', 20) || md5('c' || g), 'published', now() - g * interval '1 hour'
      FROM generate_series(1, ${OTHERS}) AS g`);
    await db.execute(sql`
      INSERT INTO roadmap_items (slug, title, summary, description, updated_at)
      SELECT 'item-' || g, 'Roadmap item ' || g, 'Summary of item ' || g,
             repeat('Why we want this and how it works. ', 10) || md5('r' || g), now() - g * interval '1 second'
      FROM generate_series(1, ${OTHERS}) AS g`);
    for (const { indexdef } of definitions) await db.execute(sql.raw(indexdef));
    for (const table of ['blog_posts', 'changelog_entries', 'roadmap_items']) await db.execute(sql.raw(`ANALYZE ${table}`));
  }, 300_000);
  afterAll(() => content.close());

  const plan = async (query: ReturnType<typeof searchQuery>) => {
    const result = await content.service.ctx.db.execute(sql`EXPLAIN ${query}`);
    return (result as unknown as { rows: Array<Record<string, unknown>> }).rows.map((line) => String(Object.values(line)[0])).join('\n');
  };

  it('keeps the search indexes free of a fast-update pending list', () => {
    // Without autovacuum (the embedded database has none) a pending list makes the planner scan the table.
    expect(definitions.every(({ indexdef }) => /fastupdate='?(false|off)'?/.test(indexdef))).toBe(true);
  });

  it(`answers a selective query over ${POSTS} posts from the trigram index`, async () => {
    const text = await plan(searchQuery(content.service.ctx.db, 'blog', { query: fingerprint(4321).slice(0, 12), limit: 10 }));
    expect(text).toContain(INDEXES.blog);
    expect(text).not.toMatch(/Seq Scan/);
  });

  it.each(SEARCH_TYPES)('keeps the %s index in use with escaped wildcards in the query', async (type) => {
    const text = await plan(searchQuery(content.service.ctx.db, type, { query: '7f3e%_a9c2', limit: 10 }));
    expect(text).toContain(INDEXES[type]);
    expect(text).not.toMatch(/Seq Scan/);
  });

  it('finds the one post holding a fingerprint and groups the common ones within the limit', async () => {
    const one = await searchContent(content.service.ctx, { query: fingerprint(4321).slice(0, 12), type: 'all', limit: 10 });
    expect(one.results.blog.map((result) => result.slug)).toEqual(['scale-4321']);
    const many = await searchContent(content.service.ctx, { query: 'about postgres', type: 'blog', limit: 50 });
    expect(many.results.blog).toHaveLength(50);
  });
});
