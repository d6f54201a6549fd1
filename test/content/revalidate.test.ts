/**
 * Revalidation (spec 4.4 POST /revalidate; DESIGN 3): the site's hook is called in the background with the
 * bearer secret and `{type, slug, paths}`, retried after a failure, and never blocks or fails a write.
 * The site is a real HTTP server on an ephemeral port.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';
import { startSite, type Site } from '../helpers/revalidation-site.js';

const SITE_SECRET = 'site-revalidate-secret';

async function waitFor<T>(check: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
}

/**
 * A write that waited for a hanging or dead site would take the 5 s send timeout at least; anything under it
 * shows the write did not wait (kept close to 5 s so a busy machine does not make it flaky).
 */
const PROMPT_MS = 4_500;

describe.each(engines)('revalidation on %s', (engine) => {
  describe('with the site answering', () => {
    let site: Site;
    let content: TestContent;
    beforeAll(async () => {
      site = await startSite();
      content = await startContent(engine, { config: { revalidate: { url: site.url, secret: SITE_SECRET } } });
    });
    afterAll(async () => {
      await site.close();
      await content.close();
    });

    const forSlug = (slug: string) => site.received.filter((entry) => entry.body.slug === slug);
    const createItem = async (fields: Record<string, unknown>) => {
      const response = await content.request('POST', '/roadmap', { auth: true, json: { ...actor, ...fields } });
      expect(response.status).toBe(201);
      return response.body.slug as string;
    };

    it('queues POST /revalidate and answers 202 with the paths', async () => {
      const response = await content.request('POST', '/revalidate', { auth: true, json: { ...actor, type: 'blog', slug: 'hello-world' } });
      expect(response.status).toBe(202);
      expect(response.body).toEqual({ queued: true, type: 'blog', slug: 'hello-world', paths: ['/blog', '/blog/hello-world'], configured: true });
    });

    it('posts {type, slug, paths} to the site with its bearer secret', async () => {
      await content.request('POST', '/revalidate', { auth: true, json: { ...actor, type: 'changelog', slug: 'v1-2-0' } });
      const [request] = await waitFor(() => forSlug('v1-2-0').length > 0 && forSlug('v1-2-0'));
      expect(request).toEqual({
        method: 'POST',
        path: '/api/revalidate',
        authorization: `Bearer ${SITE_SECRET}`,
        contentType: 'application/json',
        body: { type: 'changelog', slug: 'v1-2-0', paths: ['/changelog', '/changelog/v1-2-0'] },
      });
    });

    it('revalidates when a public roadmap item is created, updated or shipped', async () => {
      const slug = await createItem({ title: 'Revalidated item' });
      await waitFor(() => forSlug(slug).length === 1);
      await content.request('PATCH', `/roadmap/${slug}`, { auth: true, json: { ...actor, priority: 'high' } });
      await waitFor(() => forSlug(slug).length === 2);
      await content.request('POST', `/roadmap/${slug}/ship`, { auth: true, json: actor });
      const requests = await waitFor(() => forSlug(slug).length === 3 && forSlug(slug));
      expect(requests.map((request) => request.body)).toEqual(Array(3).fill({ type: 'roadmap', slug, paths: ['/roadmap', `/roadmap/${slug}`] }));
    });

    it('does not revalidate for an item the public roadmap never shows', async () => {
      const hidden = await createItem({ title: 'Never shown', public: false });
      await content.request('PATCH', `/roadmap/${hidden}`, { auth: true, json: { ...actor, priority: 'high' } });
      await content.request('POST', '/revalidate', { auth: true, json: { ...actor, type: 'roadmap', slug: 'marker' } });
      await waitFor(() => forSlug('marker').length > 0);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(forSlug(hidden)).toEqual([]);
    });

    it('refuses malformed requests with 400 and sends nothing for them', async () => {
      const refused = [
        { type: 'page', slug: 'refused' },
        { type: 'blog' },
        { type: 'blog', slug: '../refused' },
        { type: 'blog', slug: 'refused', actor_id: undefined },
        { type: 'blog', slug: 'refused', paths: ['/'] },
      ];
      for (const fields of refused) {
        const response = await content.request('POST', '/revalidate', { auth: true, json: { ...actor, ...fields } });
        expect(response.status).toBe(400);
        expect(response.body.error.code).toBe('invalid_request');
      }
      const unauthenticated = await content.request('POST', '/revalidate', { json: { ...actor, type: 'blog', slug: 'refused' } });
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.body.error.code).toBe('unauthorized');
      await content.request('POST', '/revalidate', { auth: true, json: { ...actor, type: 'blog', slug: 'after-refusals' } });
      await waitFor(() => forSlug('after-refusals').length > 0);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(site.received.filter((entry) => entry.body.slug === undefined || entry.body.slug.includes('refused'))).toEqual([]);
    });

    it('retries after the site answers 500, until it answers 200', async () => {
      site.answer = (slug, attempt) => (slug === 'flaky' && attempt === 1 ? 'fail' : 'ok');
      await content.request('POST', '/revalidate', { auth: true, json: { ...actor, type: 'blog', slug: 'flaky' } });
      const requests = await waitFor(() => forSlug('flaky').length === 2 && forSlug('flaky'));
      expect(requests[1]).toEqual(requests[0]);
      // Delivered: the job is done and gone.
      expect(await pollJobs(content, 'flaky', (rows) => rows.length === 0)).toEqual([]);
    });

    it('never follows a redirect: a 307 is a failed attempt, retried at the configured address', async () => {
      site.answer = (slug, attempt) => (slug === 'moved' && attempt === 1 ? 'redirect' : 'ok');
      await content.request('POST', '/revalidate', { auth: true, json: { ...actor, type: 'blog', slug: 'moved' } });
      const requests = await waitFor(() => forSlug('moved').length === 2 && forSlug('moved'));
      expect(requests.map((request) => request.path)).toEqual(['/api/revalidate', '/api/revalidate']);
      expect(await pollJobs(content, 'moved', (rows) => rows.length === 0)).toEqual([]);
      expect(site.received.filter((request) => request.path === '/elsewhere')).toEqual([]);
    });

    it('answers writes promptly while the site hangs', async () => {
      site.answer = (slug) => (slug.startsWith('stuck') ? 'hang' : 'ok');
      const slug = await createItem({ title: 'Stuck site', slug: 'stuck-item' });
      await waitFor(() => forSlug(slug).length > 0);
      const [shipped, shipMs] = await timed(() => content.request('POST', `/roadmap/${slug}/ship`, { auth: true, json: actor }));
      expect(shipped.status).toBe(200);
      expect(shipMs).toBeLessThan(PROMPT_MS);
      const [queued, queueMs] = await timed(() =>
        content.request('POST', '/revalidate', { auth: true, json: { ...actor, type: 'roadmap', slug: 'stuck-item' } }),
      );
      expect(queued.status).toBe(202);
      expect(queueMs).toBeLessThan(PROMPT_MS);
      expect((await content.request('GET', `/roadmap/${slug}`)).body.status).toBe('shipped');
    });
  });

  describe('with the site down', () => {
    let content: TestContent;
    beforeAll(async () => {
      const site = await startSite();
      await site.close();
      content = await startContent(engine, { config: { revalidate: { url: site.url, secret: SITE_SECRET } } });
    });
    afterAll(() => content.close());

    it('still answers writes promptly and keeps the request for a retry', async () => {
      const [created, createMs] = await timed(() =>
        content.request('POST', '/roadmap', { auth: true, json: { ...actor, title: 'Site is down', status: 'in_progress' } }),
      );
      expect(created.status).toBe(201);
      expect(createMs).toBeLessThan(PROMPT_MS);
      const [shipped, shipMs] = await timed(() => content.request('POST', '/roadmap/site-is-down/ship', { auth: true, json: actor }));
      expect(shipped.status).toBe(200);
      expect(shipped.body.status).toBe('shipped');
      expect(shipMs).toBeLessThan(PROMPT_MS);

      const rows = await pollJobs(content, 'site-is-down', (found) => found.some((row) => row.last_error !== null));
      // The create and the ship each queue a request: the one that was tried is kept for a retry.
      const tried = rows.find((row) => row.last_error !== null);
      expect(tried).toBeDefined();
      expect(tried!.attempts).toBeGreaterThanOrEqual(1);
      expect(tried!.failed_at).toBeNull();
    });
  });

  describe('without a site configured', () => {
    let content: TestContent;
    beforeAll(async () => {
      content = await startContent(engine);
    });
    afterAll(() => content.close());

    it('accepts the request and reports that nothing will be sent', async () => {
      const response = await content.request('POST', '/revalidate', { auth: true, json: { ...actor, type: 'roadmap', slug: 'anything' } });
      expect(response.status).toBe(202);
      expect(response.body).toEqual({ queued: true, type: 'roadmap', slug: 'anything', paths: ['/roadmap', '/roadmap/anything'], configured: false });
    });

    it('needs the secret', async () => {
      const response = await content.request('POST', '/revalidate', { json: { ...actor, type: 'blog', slug: 'x' } });
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('unauthorized');
    });
  });
});

interface JobRow extends Record<string, unknown> {
  attempts: number;
  last_error: string | null;
  failed_at: string | null;
}

/** The revalidation jobs of a slug, polled until `done` says so (or 10 s pass). */
async function pollJobs(content: TestContent, slug: string, done: (rows: JobRow[]) => boolean): Promise<JobRow[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = await content.service.ctx.database.rows<JobRow>(
      sql`SELECT attempts, last_error, failed_at FROM jobs WHERE kind = 'revalidate' AND payload->>'slug' = ${slug}`,
    );
    if (done(rows) || Date.now() > deadline) return rows;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
