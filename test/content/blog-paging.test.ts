/**
 * Cursor paging of GET /blog (spec 4.4, 8; DESIGN 3): no post is skipped or repeated while paging, even
 * when hundreds of posts were published in the same millisecond.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blogPosts } from '../../src/content/schema.js';
import { queryRows } from '../../src/platform/database.js';
import { orderedNow } from '../../src/platform/time.js';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

const BULK = 200;
const CONCURRENT = 50;

describe.each(engines)('paging published posts on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    content = await startContent(engine);
    // One statement: every row gets the same now(), so all 200 share one millisecond and differ only in
    // the sub-millisecond digits orderedNow() adds.
    await content.service.ctx.db.insert(blogPosts).values(
      Array.from({ length: BULK }, (_, n) => ({
        slug: `bulk-${n}`,
        title: `Bulk post ${n}`,
        authorName: 'Atrium Team',
        tags: n % 3 === 0 ? ['every-third'] : ['other'],
        status: 'published',
        publishedAt: orderedNow() as unknown as string,
        createdAt: orderedNow() as unknown as string,
      })),
    );
    // And through the API, all at once.
    const created = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, n) =>
        content.request('POST', '/blog', {
          auth: true,
          json: { title: `Concurrent post ${n}`, status: 'published', tags: n % 3 === 0 ? ['every-third'] : [], ...actor },
        }),
      ),
    );
    expect(created.map((response) => response.status)).toEqual(Array(CONCURRENT).fill(201));
    // Unpublished posts never show up in the public list.
    await content.request('POST', '/blog', { auth: true, json: { title: 'A draft', tags: ['every-third'], ...actor } });
  });
  afterAll(() => content.close());

  async function pageThrough(query: string, limit: number) {
    const seen: string[] = [];
    const totals = new Set<number>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response = await content.request('GET', `/blog?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(response.status).toBe(200);
      seen.push(...response.body.posts.map((post: { slug: string }) => post.slug));
      totals.add(response.body.total);
      cursor = response.body.next_cursor;
      if (++pages > 1000) throw new Error('paging does not end');
    } while (cursor);
    return { seen, totals: [...totals], pages };
  }

  it('really has posts sharing a millisecond', async () => {
    const [{ shared }] = await content.service.ctx.database.rows<{ shared: number }>(
      sql`SELECT max(n)::int AS shared FROM (SELECT count(*) AS n FROM blog_posts GROUP BY date_trunc('milliseconds', published_at)) AS per_ms`,
    );
    expect(shared).toBeGreaterThanOrEqual(BULK);
  });

  it('returns each of 250 published posts exactly once with a small limit, and next_cursor null at the end', async () => {
    const { seen, totals, pages } = await pageThrough('', 7);
    expect(seen).toHaveLength(BULK + CONCURRENT);
    expect(new Set(seen).size).toBe(BULK + CONCURRENT);
    expect(seen).not.toContain('a-draft');
    expect(totals).toEqual([BULK + CONCURRENT]);
    expect(pages).toBe(Math.ceil((BULK + CONCURRENT) / 7));
  });

  it('orders newest first: the API-created posts come before the older bulk', async () => {
    const { seen } = await pageThrough('', 100);
    expect(seen.slice(0, CONCURRENT).every((slug) => slug.startsWith('concurrent-post-'))).toBe(true);
    // Within the shared millisecond the order is the sub-millisecond digits', not necessarily insertion order.
    expect(new Set(seen.slice(CONCURRENT))).toEqual(new Set(Array.from({ length: BULK }, (_, n) => `bulk-${n}`)));
  });

  it('filters by tag, counting only matching published posts in total', async () => {
    const expected = Math.ceil(BULK / 3) + Math.ceil(CONCURRENT / 3);
    const { seen, totals } = await pageThrough('&tag=every-third', 9);
    expect(seen).toHaveLength(expected);
    expect(new Set(seen).size).toBe(expected);
    expect(totals).toEqual([expected]);
    expect(seen.filter((slug) => slug.startsWith('bulk-')).every((slug) => Number(slug.slice(5)) % 3 === 0)).toBe(true);
  });

  it('answers an unknown tag with an empty page', async () => {
    const response = await content.request('GET', '/blog?tag=nothing-here');
    expect(response.body).toEqual({ posts: [], next_cursor: null, total: 0 });
  });

  it('defaults to 20 posts and allows 100', async () => {
    expect((await content.request('GET', '/blog')).body.posts).toHaveLength(20);
    expect((await content.request('GET', '/blog?limit=100')).body.posts).toHaveLength(100);
  });

  it('keeps the total as posts are archived, republished and deleted, several at once or one by one', async () => {
    const { db } = content.service.ctx;
    const published = async () => (await queryRows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM blog_posts WHERE status = 'published'`))[0].n;
    // Written here around the domain layer (whose read cache would keep answering the old total): the kept count itself.
    const total = async () => (await queryRows<{ total: string }>(db, sql`SELECT total FROM content_totals WHERE list = 'blog.published'`)).map((row) => Number(row.total))[0];
    const start = await published();
    expect((await content.request('GET', '/blog?limit=1')).body.total).toBe(start);
    expect(await total()).toBe(start);
    await db.execute(sql`UPDATE blog_posts SET status = 'archived' WHERE slug LIKE 'bulk-1%'`);
    await db.execute(sql`UPDATE blog_posts SET title = title || '!' WHERE slug LIKE 'bulk-2%'`);
    expect(await total()).toBe(await published());
    expect(await published()).toBeLessThan(start);
    await db.execute(sql`UPDATE blog_posts SET status = 'published' WHERE slug = 'bulk-10'`);
    await db.execute(sql`DELETE FROM blog_posts WHERE slug LIKE 'bulk-3%' OR slug = 'bulk-11'`);
    expect(await total()).toBe(await published());
  });
});
