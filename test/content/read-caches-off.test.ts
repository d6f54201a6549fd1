/**
 * `readCaches: false` (service.ts, for benchmarks and diagnostics) sends every read to the database: a row
 * written behind the service's back — straight into the table, so no change notice empties any cache — shows
 * at once, on the public (anonymous) path and on the authenticated one, which the domain read cache serves.
 * The same sequence with the default caches still shows the old answers, so the test can tell the two apart.
 */
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { blogPosts } from '../../src/content/schema.js';
import { startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

describe.each(engines)('read caches on %s', (engine) => {
  let content: TestContent | undefined;
  afterEach(async () => {
    await content?.close();
    content = undefined;
  });

  const routes = [
    { name: 'GET /blog, anonymous (public cache)', path: '/blog?limit=20', auth: false },
    { name: 'GET /blog, authenticated (domain cache)', path: '/blog?limit=20', auth: true },
    { name: 'GET /search, anonymous (public cache)', path: '/search?query=wombat', auth: false },
    { name: 'GET /search, authenticated (domain cache)', path: '/search?query=wombat', auth: true },
  ];

  /** Reads every route once (filling whatever caches there are), inserts a post behind the service's back, reads again. */
  async function readsAfterHiddenInsert(service: TestContent): Promise<Record<string, boolean>> {
    for (const route of routes) {
      const before = await service.request('GET', route.path, { auth: route.auth });
      expect(before.status, before.text).toBe(200);
      expect(before.text).not.toContain('wombat-facts');
    }
    await service.service.ctx.db.insert(blogPosts).values({
      slug: 'wombat-facts',
      title: 'Wombat facts',
      authorName: 'Team',
      status: 'published',
      publishedAt: sql`now()` as unknown as string,
    });
    const seen: Record<string, boolean> = {};
    for (const route of routes) {
      const after = await service.request('GET', route.path, { auth: route.auth });
      expect(after.status, after.text).toBe(200);
      seen[route.name] = after.text.includes('wombat-facts');
    }
    return seen;
  }

  it('with readCaches: false, a row inserted behind the service is visible at once on every path', async () => {
    content = await startContent(engine, { readCaches: false });
    expect(await readsAfterHiddenInsert(content)).toEqual(Object.fromEntries(routes.map((route) => [route.name, true])));
  });

  it('with the default caches, the same row stays hidden until a change notice or the safety TTL', async () => {
    content = await startContent(engine);
    expect(await readsAfterHiddenInsert(content)).toEqual(Object.fromEntries(routes.map((route) => [route.name, false])));
  });

  it('with readCaches: false, public GETs still carry an ETag and answer If-None-Match with 304', async () => {
    content = await startContent(engine, { readCaches: false });
    const first = await content.request('GET', '/blog?limit=20');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await content.request('GET', '/blog?limit=20', { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
  });
});
