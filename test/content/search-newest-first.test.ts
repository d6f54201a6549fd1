/**
 * On a big table search reads the title matches, then the newest posts, and asks the whole-table trigram index
 * only for what those did not hold (searchNewestFirst). Its answers must be exactly those of the one query
 * (searchQuery), whichever step completes the page: same rows, same order, same visibility.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchNewestFirst, searchQuery } from '../../src/content/search.js';
import { startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

/** More posts than the newest-first window (5,000), so some matches lie beyond it. */
const POSTS = 6_500;

describe.each(engines)('newest-first search on %s', (engine) => {
  let content: TestContent;

  beforeAll(async () => {
    content = await startContent(engine);
    // Post g is g minutes old, and three posts share each minute, so ties fall to the id. One in 13 is a draft.
    // "everyday" is in every 40th body (the window holds a page of it); "seldom" in six bodies, half of them
    // older than the window; "headline" in the titles of a few old posts and the bodies of many new ones;
    // "banner" in the titles of every 20th post (a page of title matches on its own).
    await content.service.ctx.db.execute(sql`
      INSERT INTO blog_posts (slug, title, description, content, author_name, status, published_at, updated_at)
      SELECT 'post-' || g,
             'Post ' || g || CASE WHEN g % 1500 = 1499 THEN ' headline' ELSE '' END || CASE WHEN g % 20 = 0 THEN ' banner' ELSE '' END,
             'About post ' || g,
             'Body of post ' || g || CASE WHEN g % 40 = 0 THEN ' with everyday words' ELSE '' END
               || CASE WHEN g IN (10, 2000, 4000, 5500, 6000, 6400) THEN ' and a seldom one' ELSE '' END
               || CASE WHEN g % 7 = 0 THEN ' headlines below' ELSE '' END,
             'Team',
             CASE WHEN g % 13 = 0 THEN 'draft' ELSE 'published' END,
             CASE WHEN g % 13 = 0 THEN NULL ELSE now() - (g / 3) * interval '1 minute' END,
             now() - (g / 3) * interval '1 minute'
      FROM generate_series(1, ${POSTS}) AS g`);
  }, 300_000);
  afterAll(() => content.close());

  const cases = [
    ['a word common in bodies (the window fills the page)', 'everyday'],
    ['a rare word, partly older than the window', 'seldom'],
    ['a word in old titles and new bodies (titles first)', 'headline'],
    ['a word in many titles (the title matches fill the page)', 'banner'],
    ['a word found nowhere', 'platypus'],
    ['a short query', 'po'],
    ['wildcards, which match themselves', 'o_t 1%'],
    ['words across a space', 'of post 6'],
  ] as const;

  it.each(cases)('answers %s exactly as the one query does', async (_case, query) => {
    const { db } = content.service.ctx;
    for (const limit of [1, 3, 10, 50]) {
      for (const includeHidden of [false, true]) {
        const expected = await searchQuery(db, 'blog', { query, limit }, { includeHidden });
        expect(await searchNewestFirst(db, 'blog', { query, limit }, { includeHidden }), `${query}, limit ${limit}, hidden ${includeHidden}`).toEqual(expected);
      }
    }
  });

  it('finds matches older than the window', async () => {
    const found = await searchNewestFirst(content.service.ctx.db, 'blog', { query: 'seldom', limit: 10 });
    expect(found.map((row) => row.slug)).toEqual(['post-10', 'post-2000', 'post-4000', 'post-5500', 'post-6000', 'post-6400']);
  });

  it('lists an old title match before every newer body match', async () => {
    const found = await searchNewestFirst(content.service.ctx.db, 'blog', { query: 'headline', limit: 5 });
    expect(found.map((row) => row.slug)).toEqual(['post-1499', 'post-2999', 'post-4499', 'post-5999', 'post-7']);
  });
});
