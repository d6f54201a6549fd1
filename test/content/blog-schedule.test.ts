/**
 * Scheduled publishing (DESIGN 3, 6): a scheduled post publishes itself at its time, exactly once — also
 * with two content services on one PostgreSQL database, and when the publish job runs twice at once.
 */
import { and, eq, sql } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { publishDuePost } from '../../src/content/blog/publish-job.js';
import { activity, blogPosts } from '../../src/content/schema.js';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines, testDatabase, type Engine } from '../helpers/databases.js';

const readyPost = { title: 'A scheduled announcement', content: 'Body', tags: ['news'] };

describe.each(engines)('scheduled publishing on %s', (engine) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function start(options: Parameters<typeof startContent>[1] = {}): Promise<TestContent> {
    const content = await startContent(engine, options);
    cleanups.push(() => content.close());
    return content;
  }

  async function schedule(content: TestContent, title: string, publishAt: Date) {
    const created = await content.request('POST', '/blog', { auth: true, json: { ...readyPost, title, ...actor } });
    expect(created.status).toBe(201);
    const scheduled = await content.request('POST', `/blog/${created.body.slug}/schedule`, {
      auth: true,
      json: { publish_at: publishAt.toISOString(), ...actor },
    });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.status).toBe('scheduled');
    return created.body.slug as string;
  }

  const publishedEntries = (content: TestContent, slug: string) =>
    content.service.ctx.db
      .select()
      .from(activity)
      .where(and(eq(activity.resource, 'blog'), eq(activity.resourceId, slug), eq(activity.action, 'published')));

  const statusOf = async (content: TestContent, slug: string) =>
    (await content.request('GET', `/blog/${slug}?preview=true`, { auth: true })).body;

  it('publishes a scheduled post once, at its time, as the system actor', async () => {
    const content = await start();
    const publishAt = new Date(Date.now() + 1_500);
    const slug = await schedule(content, 'Publishes itself soon', publishAt);

    expect((await content.request('GET', `/blog/${slug}`)).status).toBe(404);
    expect((await statusOf(content, slug)).status).toBe('scheduled');

    await vi.waitFor(async () => expect((await statusOf(content, slug)).status).toBe('published'), { timeout: 10_000, interval: 100 });
    const post = await statusOf(content, slug);
    expect(Date.parse(post.published_at)).toBeGreaterThanOrEqual(publishAt.getTime());
    // The public list shows it once the public read cache (at most 1 s old) has expired.
    await vi.waitFor(async () => expect((await content.request('GET', `/blog/${slug}`)).status).toBe(200), { timeout: 5_000, interval: 100 });

    // Several more polls of the worker later, still exactly one publication.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const entries = await publishedEntries(content, slug);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actorId: 'scheduler', actorType: 'system', changes: { status: ['scheduled', 'published'] } });
  });

  it('publishes exactly once when the publish job runs twice at the same moment', async () => {
    // Workers that do not poll on their own, so the two runs below are the only ones racing.
    const database = testDatabase(engine);
    if (engine === 'postgres') cleanups.push(() => database.drop());
    const first = await start({ database, jobPollMs: 3_600_000 });
    const second = engine === 'postgres' ? await start({ database, jobPollMs: 3_600_000 }) : first;

    // Scheduled well ahead (a busy machine may take longer than a short delay to schedule it), then made due.
    const slug = await schedule(first, 'Raced publication', new Date(Date.now() + 60_000));
    const [{ id }] = await first.service.ctx.db
      .update(blogPosts)
      .set({ publishAt: sql`now() - interval '1 second'` })
      .where(eq(blogPosts.slug, slug))
      .returning({ id: blogPosts.id });

    const results = await Promise.all([publishDuePost(first.service.ctx, id), publishDuePost(second.service.ctx, id)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await publishedEntries(first, slug)).toHaveLength(1);
    expect((await statusOf(first, slug)).status).toBe('published');
  });

  it('does not publish a post before its time', async () => {
    const content = await start({ jobPollMs: 3_600_000 });
    const slug = await schedule(content, 'Not yet', new Date(Date.now() + 60_000));
    const [{ id }] = await content.service.ctx.db.select({ id: blogPosts.id }).from(blogPosts).where(eq(blogPosts.slug, slug));
    expect(await publishDuePost(content.service.ctx, id)).toBe(false);
    expect((await statusOf(content, slug)).status).toBe('scheduled');
  });
});

describe.skipIf(!engines.includes('postgres'))('scheduled publishing with two content services on one PostgreSQL', () => {
  const engine: Engine = 'postgres';
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('publishes each scheduled post exactly once, with exactly one activity entry', async () => {
    const database = testDatabase(engine);
    cleanups.push(() => database.drop());
    const services = [await startContent(engine, { database }), await startContent(engine, { database })];
    for (const service of services) cleanups.push(() => service.close());
    const [first, second] = services;

    const publishAt = new Date(Date.now() + 2_000);
    const slugs: string[] = [];
    for (let n = 0; n < 6; n++) {
      // Scheduled through either process; either may publish it.
      const through = n % 2 === 0 ? first : second;
      const created = await through.request('POST', '/blog', { auth: true, json: { title: `Shared schedule ${n}`, ...actor } });
      await through.request('POST', `/blog/${created.body.slug}/schedule`, { auth: true, json: { publish_at: publishAt.toISOString(), ...actor } });
      slugs.push(created.body.slug);
    }

    await vi.waitFor(
      async () => {
        for (const slug of slugs) expect((await second.request('GET', `/blog/${slug}?preview=true`, { auth: true })).body.status).toBe('published');
      },
      { timeout: 15_000, interval: 100 },
    );
    // Let both workers poll several more times before counting.
    await new Promise((resolve) => setTimeout(resolve, 600));
    for (const slug of slugs) {
      const entries = await first.service.ctx.db
        .select()
        .from(activity)
        .where(and(eq(activity.resourceId, slug), eq(activity.action, 'published')));
      expect(entries).toHaveLength(1);
      expect(entries[0].actorType).toBe('system');
    }
  });
});
