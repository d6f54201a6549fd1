import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etagOf, ifNoneMatchHits, PublicReadCache } from '../../src/content/rest/public-cache.js';
import { roadmapItems } from '../../src/content/schema.js';
import { actor, startContent, type TestContent, type TestResponse } from '../helpers/content.js';
import { engines, postgresUrl, testDatabase, type TestDatabase } from '../helpers/databases.js';

describe('If-None-Match comparison (RFC 9110 §13.1.2)', () => {
  const etag = '"abc"';
  it.each<[string | undefined, boolean]>([
    [undefined, false],
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    ['*', true],
    ['"abd"', false],
    ['abc', false],
  ])('%s matches: %s', (header, hits) => {
    expect(ifNoneMatchHits(header, etag)).toBe(hits);
  });
});

describe('the read cache bounds', () => {
  const entry = (body: string, storedAt = 0) => {
    const etag = etagOf(body);
    return { body: Buffer.from(body), etag, headers: { 'content-type': 'application/json', etag }, validators: { etag }, route: '/a', storedAt };
  };

  it('drops the oldest entry past the entry limit', () => {
    const cache = new PublicReadCache({ maxAgeMs: 1000, maxEntries: 2, maxBytes: 1000 });
    cache.set('/a', entry('a'));
    cache.set('/b', entry('b'));
    cache.set('/c', entry('c'));
    expect([cache.get('/a', 0), cache.get('/b', 0)?.body.toString(), cache.get('/c', 0)?.body.toString()]).toEqual([undefined, 'b', 'c']);
  });

  it('drops the oldest entries past the byte limit, and never keeps a body larger than it', () => {
    const cache = new PublicReadCache({ maxAgeMs: 1000, maxEntries: 10, maxBytes: 10 });
    cache.set('/a', entry('aaaa'));
    cache.set('/b', entry('bbbb'));
    cache.set('/c', entry('cccc'));
    expect(cache.get('/a', 0)).toBeUndefined();
    expect(cache.size).toBe(2);
    cache.set('/huge', entry('x'.repeat(11)));
    expect(cache.get('/huge', 0)).toBeUndefined();
  });

  it('expires entries after the maximum age', () => {
    const cache = new PublicReadCache({ maxAgeMs: 1000, maxEntries: 10, maxBytes: 1000 });
    cache.set('/a', entry('a', 5000));
    expect(cache.get('/a', 5999)?.body.toString()).toBe('a');
    expect(cache.get('/a', 6000)).toBeUndefined();
  });
});

/** Notices reach other processes a moment after the write returns: read again for at most `ms` (a second by default). */
async function readUntil(read: () => Promise<TestResponse>, done: (response: TestResponse) => boolean, ms = 1000): Promise<TestResponse> {
  const deadline = Date.now() + ms;
  for (;;) {
    const response = await read();
    if (done(response) || Date.now() > deadline) return response;
    await sleep(10);
  }
}

describe.each(engines)('public read cache on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    content = await startContent(engine);
    await content.request('POST', '/roadmap', { json: { title: 'Dark mode', slug: 'dark-mode', ...actor }, auth: true });
  });
  afterAll(() => content.close());

  /** A row written behind the service's back: no change notice, so no cache hears of it. */
  const insertBehindTheCache = (slug: string, isPublic = true) =>
    content.service.ctx.db.insert(roadmapItems).values({ slug, title: `Item ${slug}`, public: isPublic });
  /** The notice another process's roadmap write sends when it commits (platform/changes.ts). */
  const announceFromAnotherProcess = () =>
    content.service.ctx.db.execute(
      sql`SELECT pg_notify(${content.service.ctx.changes.channel}, ${JSON.stringify({ origin: 'another-process', changes: [{ kind: 'roadmap' }] })})`,
    );
  const slugsOf = (body: { items: Array<{ slug: string }> }) => body.items.map((item) => item.slug).sort();

  it('tags a public read with a strong ETag and keeps it out of shared caches when authenticated', async () => {
    const anonymous = await content.request('GET', '/roadmap');
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(anonymous.headers.get('cache-control')).toBe('public, no-cache');
    expect(anonymous.headers.get('vary')).toBe('Authorization');

    const authenticated = await content.request('GET', '/roadmap', { auth: true });
    expect(authenticated.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(authenticated.headers.get('cache-control')).toBe('no-store');
  });

  it('answers a cached read with the very body and headers of the read that filled the cache', async () => {
    const headersOf = (response: TestResponse) =>
      Object.fromEntries(['content-type', 'etag', 'vary', 'cache-control'].map((name) => [name, response.headers.get(name)]));
    const first = await content.request('GET', '/roadmap?limit=3');
    const cached = await content.request('GET', '/roadmap?limit=3');
    expect(cached.status).toBe(200);
    expect(cached.text).toBe(first.text);
    expect(headersOf(cached)).toEqual(headersOf(first));
    expect(headersOf(cached)).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, no-cache' });
  });

  it('keeps text beyond ASCII byte for byte, with the length of its bytes', async () => {
    const title = 'Café à la carte — 日本語の見出し ✓';
    await content.request('POST', '/roadmap', { json: { title, slug: 'cafe-a-la-carte', ...actor }, auth: true });
    const first = await content.request('GET', '/roadmap?limit=50');
    const cached = await content.request('GET', '/roadmap?limit=50');
    expect(cached.text).toBe(first.text);
    expect(cached.body.items.map((item: { title: string }) => item.title)).toContain(title);
    expect(Number(cached.headers.get('content-length'))).toBe(Buffer.byteLength(cached.text));
    expect(cached.headers.get('etag')).toBe(first.headers.get('etag'));
  });

  it('answers a matching If-None-Match with 304 and no body, from the cache and after it', async () => {
    const first = await content.request('GET', '/roadmap?limit=5');
    const etag = first.headers.get('etag')!;

    const cached = await content.request('GET', '/roadmap?limit=5', { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
    expect(cached.text).toBe('');
    expect(cached.headers.get('etag')).toBe(etag);

    const weak = await content.request('GET', '/roadmap?limit=5', { headers: { 'if-none-match': `W/${etag}` } });
    expect(weak.status).toBe(304);

    const authenticated = await content.request('GET', '/roadmap?limit=5', { auth: true, headers: { 'if-none-match': etag } });
    expect(authenticated.status).toBe(304);

    const other = await content.request('GET', '/roadmap?limit=5', { headers: { 'if-none-match': '"something-else"' } });
    expect(other.status).toBe(200);
    expect(other.text).toBe(first.text);
  });

  it('serves a cached read without asking the database until a change notice arrives', async () => {
    const before = await content.request('GET', '/roadmap?sort=votes');
    await insertBehindTheCache('behind-the-cache');

    const cached = await content.request('GET', '/roadmap?sort=votes');
    expect(cached.headers.get('etag')).toBe(before.headers.get('etag'));
    expect(slugsOf(cached.body)).not.toContain('behind-the-cache');

    await announceFromAnotherProcess();
    const fresh = await readUntil(() => content.request('GET', '/roadmap?sort=votes'), (response) => slugsOf(response.body).includes('behind-the-cache'));
    expect(slugsOf(fresh.body)).toContain('behind-the-cache');
    expect(fresh.headers.get('etag')).not.toBe(before.headers.get('etag'));
  });

  it('shows a write made through this process on the very next read', async () => {
    const before = await content.request('GET', '/roadmap');
    const created = await content.request('POST', '/roadmap', { json: { title: 'Offline mode', slug: 'offline-mode', ...actor }, auth: true });
    expect(created.status).toBe(201);

    const after = await content.request('GET', '/roadmap', { headers: { 'if-none-match': before.headers.get('etag')! } });
    expect(after.status).toBe(200);
    expect(slugsOf(after.body)).toContain('offline-mode');
  });

  it('shows an anonymous vote on the very next read', async () => {
    const before = await content.request('GET', '/roadmap/dark-mode');
    const voted = await content.request('POST', '/roadmap/dark-mode/vote', { json: { voter_id: 'reader-1' } });
    expect(voted.status).toBe(200);
    const after = await content.request('GET', '/roadmap/dark-mode');
    expect(after.body.votes).toBe(before.body.votes + 1);
  });

  it('never serves an authenticated request from the cache', async () => {
    const anonymous = await content.request('GET', '/roadmap?limit=7');
    const cached = await content.request('GET', '/roadmap?limit=7');
    expect(cached.headers.get('etag')).toBe(anonymous.headers.get('etag'));
    expect(cached.headers.get('cache-control')).toBe('public, no-cache');
    // Answered by the route (no-store: it is authenticated), not by the cache's public copy.
    const authenticated = await content.request('GET', '/roadmap?limit=7', { auth: true });
    expect(authenticated.headers.get('cache-control')).toBe('no-store');
    expect(authenticated.text).toBe(anonymous.text);
  });

  it('never stores an authenticated response for anonymous readers', async () => {
    await insertBehindTheCache('hidden-item', false);
    const authenticated = await content.request('GET', '/roadmap/hidden-item', { auth: true });
    expect(authenticated.status).toBe(200);
    const anonymous = await content.request('GET', '/roadmap/hidden-item');
    expect(anonymous.status).toBe(404);
    expect(anonymous.body.error.code).toBe('not_found');
  });

  it('keeps query strings apart', async () => {
    const one = await content.request('GET', '/roadmap?limit=1');
    const all = await content.request('GET', '/roadmap?limit=100');
    expect(one.body.items).toHaveLength(1);
    expect(all.body.items.length).toBeGreaterThan(1);
  });
});

describe.skipIf(!postgresUrl)('public read cache across two processes on one PostgreSQL', () => {
  let database: TestDatabase;
  let writer: TestContent;
  let reader: TestContent;
  beforeAll(async () => {
    database = testDatabase('postgres');
    writer = await startContent('postgres', { database });
    reader = await startContent('postgres', { database });
  });
  afterAll(async () => {
    await writer?.close();
    await reader?.close();
    await database?.drop();
  });

  it("shows a write made on one process in the other's cached reads as soon as its notice arrives", async () => {
    const path = '/blog?limit=5';
    const before = await reader.request('GET', path);
    expect((await reader.request('GET', path)).headers.get('etag')).toBe(before.headers.get('etag'));

    const created = await writer.request('POST', '/blog', { json: { title: 'Written on the other process', status: 'published', ...actor }, auth: true });
    expect(created.status).toBe(201);
    const written = Date.now();
    const after = await readUntil(
      () => reader.request('GET', path),
      (response) => response.body.posts.some((post: { slug: string }) => post.slug === 'written-on-the-other-process'),
    );
    const staleFor = Date.now() - written;
    expect(after.body.posts[0].slug).toBe('written-on-the-other-process');
    // The cache keeps entries for 60 s; only the change notice can make the reader fresh this soon.
    expect(staleFor).toBeLessThan(500);
  });

  it("shows a vote counted on one process in the other's cached read as soon as its notice arrives", async () => {
    const created = await writer.request('POST', '/roadmap', { json: { title: 'Voted on the other process', ...actor }, auth: true });
    expect(created.status).toBe(201);
    const path = `/roadmap/${created.body.slug}`;
    await readUntil(() => reader.request('GET', path), (response) => response.status === 200);
    expect((await reader.request('GET', path)).body.votes).toBe(0);

    // The vote is one statement whose change notice is part of it (votes.ts). The reader keeps its entry for 60 s:
    // only the notice can make it fresh within the 10 s allowed here (for a busy machine).
    expect((await writer.request('POST', `${path}/vote`, { json: { voter_id: 'far-away' } })).body).toEqual({ votes: 1, voted: true });
    const after = await readUntil(() => reader.request('GET', path), (response) => response.body.votes === 1, 10_000);
    expect(after.body.votes).toBe(1);
  });
});
