/**
 * Blog posts over REST (spec 2.6, 3.1, 4.4, 5.2, 7.2; DESIGN 3): every endpoint's success path, every
 * refusal with its exact status and code, and proof that a refused request changed nothing.
 */
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { activity } from '../../src/content/schema.js';
import { jobs } from '../../src/platform/schema.js';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';
import { startSite, type Site } from '../helpers/revalidation-site.js';

/** A post that passes submit validation (DESIGN 3). */
const readyPost = {
  title: 'A post that is ready for review',
  description: 'A description that is long enough to pass the fifty character minimum.',
  content: 'Lorem ipsum dolor sit amet. '.repeat(12),
  tags: ['news', 'release'],
};

describe.each(engines)('blog posts on %s', (engine) => {
  let content: TestContent;
  /** What the rendered site's revalidation hook received (DESIGN 3). */
  const revalidated: Array<{ type: string; slug: string; paths: string[] }> = [];
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ onReceive: ({ body }) => revalidated.push(body) });
    content = await startContent(engine, { config: { revalidate: { url: site.url, secret: 'site-secret' } } });
  });
  afterAll(async () => {
    await content.close();
    await site.close();
  });

  let counter = 0;
  /** Creates a post through the API and returns its record. */
  async function create(fields: Record<string, unknown> = {}) {
    const response = await content.request('POST', '/blog', {
      auth: true,
      json: { title: `Post number ${++counter}`, ...fields, ...actor },
    });
    expect(response.status).toBe(201);
    return response.body;
  }
  const move = (slug: string, action: string, body: Record<string, unknown> = actor) =>
    content.request('POST', `/blog/${slug}/${action}`, { auth: true, json: body });
  const preview = async (slug: string) => (await content.request('GET', `/blog/${slug}?preview=true`, { auth: true })).body;
  const activityOf = (slug: string) =>
    content.service.ctx.db
      .select()
      .from(activity)
      .where(and(eq(activity.resource, 'blog'), eq(activity.resourceId, slug)))
      .orderBy(asc(activity.createdAt));
  const revalidationsOf = (slug: string) => revalidated.filter((call) => call.slug === slug).length;
  /** Revalidation is sent by the job worker after the write commits, so wait for it. */
  const expectRevalidations = (slug: string, times: number) =>
    vi.waitFor(() => expect(revalidationsOf(slug)).toBe(times), { timeout: 5_000, interval: 50 });
  const publishJobs = async () => (await content.service.ctx.db.select().from(jobs).where(eq(jobs.kind, 'publish-post'))).length;

  /** Asserts a refusal and that the post and its activity log are exactly as before. */
  async function expectRefusedUnchanged(slug: string, request: () => Promise<{ status: number; body: any }>, status: number, code: string) {
    const before = await preview(slug);
    const entriesBefore = (await activityOf(slug)).length;
    const response = await request();
    expect(response.status).toBe(status);
    expect(response.body.error.code).toBe(code);
    expect(await preview(slug)).toEqual(before);
    expect((await activityOf(slug)).length).toBe(entriesBefore);
    return response.body.error;
  }

  describe('create', () => {
    it('creates a draft with a slug from the title, the team author and an activity entry', async () => {
      const response = await content.request('POST', '/blog', {
        auth: true,
        json: { title: 'Héllo, Wörld! Our first post', content: '# Hi', tags: ['news'], ...actor },
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        slug: 'hello-world-our-first-post',
        title: 'Héllo, Wörld! Our first post',
        content: '# Hi',
        description: null,
        author_name: 'Atrium Team',
        author_email: null,
        tags: ['news'],
        status: 'draft',
        og_image_url: null,
        published_at: null,
      });
      const [entry] = await activityOf('hello-world-our-first-post');
      expect(entry).toMatchObject({ action: 'created', actorId: 'tester', actorType: 'human' });
    });

    it('makes a derived slug unique with -2, -3', async () => {
      const slugs = [];
      for (let n = 0; n < 3; n++) slugs.push((await create({ title: 'Same title every time' })).slug);
      expect(slugs).toEqual(['same-title-every-time', 'same-title-every-time-2', 'same-title-every-time-3']);
    });

    it('gives concurrent creates with one title distinct slugs', async () => {
      const created = await Promise.all(Array.from({ length: 8 }, () => create({ title: 'Raced title' })));
      expect(new Set(created.map((post) => post.slug)).size).toBe(8);
    });

    it('accepts a given slug and refuses a taken one with 409 conflict', async () => {
      const post = await create({ slug: 'chosen-slug' });
      expect(post.slug).toBe('chosen-slug');
      const response = await content.request('POST', '/blog', { auth: true, json: { title: 'Another', slug: 'chosen-slug', ...actor } });
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'conflict', details: { field: 'slug' } });
    });

    it('never gives a post the slug "drafts", which /blog/drafts already answers', async () => {
      expect((await create({ title: 'Drafts' })).slug).toBe('drafts-2');
      const response = await content.request('POST', '/blog', { auth: true, json: { title: 'Mine', slug: 'drafts', ...actor } });
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'conflict', details: { field: 'slug' } });
    });

    it('publishes on create with status published and asks for revalidation', async () => {
      const post = await create({ status: 'published', og_image_url: 'https://example.com/og.png', author_name: 'Ada' });
      expect(post).toMatchObject({ status: 'published', og_image_url: 'https://example.com/og.png', author_name: 'Ada' });
      expect(post.published_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      expect((await content.request('GET', `/blog/${post.slug}`)).status).toBe(200);
      await expectRevalidations(post.slug, 1);
      expect(revalidated.find((call) => call.slug === post.slug)).toEqual({ type: 'blog', slug: post.slug, paths: ['/blog', `/blog/${post.slug}`] });
    });

    it('does not revalidate when a draft is created or edited', async () => {
      const post = await create();
      await content.request('PATCH', `/blog/${post.slug}`, { auth: true, json: { content: 'edited', ...actor } });
      await create({ status: 'published' }).then((other) => expectRevalidations(other.slug, 1));
      expect(revalidationsOf(post.slug)).toBe(0);
    });

    it.each([
      ['no title', { content: 'x' }],
      ['an empty title', { title: '   ' }],
      ['status review', { title: 'Post', status: 'review' }],
      ['status archived', { title: 'Post', status: 'archived' }],
      ['a short description', { title: 'Post', description: 'too short' }],
      ['a long description', { title: 'Post', description: 'x'.repeat(161) }],
      ['a malformed slug', { title: 'Post', slug: 'Not A Slug' }],
      ['author_email (update only)', { title: 'Post', author_email: 'a@example.com' }],
      ['an unknown field', { title: 'Post', titel: 'typo' }],
      ['tags that are not strings', { title: 'Post', tags: [1, 2] }],
      ['an og_image_url that is not http(s)', { title: 'Post', og_image_url: 'javascript:alert(1)' }],
    ])('refuses a body with %s (400 invalid_request) and writes nothing', async (_name, body) => {
      const before = await content.request('GET', '/blog/drafts?limit=100', { auth: true });
      const response = await content.request('POST', '/blog', { auth: true, json: { ...body, ...actor } });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      const after = await content.request('GET', '/blog/drafts?limit=100', { auth: true });
      expect(after.body.total).toBe(before.body.total);
    });

    it('refuses a write without actor_id or with an unknown actor_type (400)', async () => {
      for (const json of [{ title: 'Post' }, { title: 'Post', actor_id: 'x', actor_type: 'robot' }]) {
        const response = await content.request('POST', '/blog', { auth: true, json });
        expect(response.status).toBe(400);
        expect(response.body.error.code).toBe('invalid_request');
      }
    });
  });

  describe('read', () => {
    it('hides unpublished posts from public reads (404) and shows them in preview with the secret', async () => {
      const post = await create();
      const publicRead = await content.request('GET', `/blog/${post.slug}`);
      expect(publicRead.status).toBe(404);
      expect(publicRead.body.error.code).toBe('not_found');
      const previewed = await content.request('GET', `/blog/${post.slug}?preview=true`, { auth: true });
      expect(previewed.status).toBe(200);
      expect(previewed.body).toMatchObject({ slug: post.slug, status: 'draft', content: '' });
    });

    it('answers 404 not_found for an unknown slug', async () => {
      const response = await content.request('GET', '/blog/no-such-post?preview=true', { auth: true });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    });

    it('lists draft, review and scheduled posts under /blog/drafts, not published ones, without bodies', async () => {
      const draft = await create({ content: 'body' });
      const review = await create(readyPost);
      expect((await move(review.slug, 'submit')).status).toBe(200);
      const scheduled = await create();
      expect((await move(scheduled.slug, 'schedule', { publish_at: new Date(Date.now() + 3_600_000).toISOString(), ...actor })).status).toBe(200);
      const published = await create({ status: 'published' });

      const response = await content.request('GET', '/blog/drafts?limit=100', { auth: true });
      expect(response.status).toBe(200);
      const slugs = response.body.posts.map((post: { slug: string }) => post.slug);
      expect(slugs).toEqual(expect.arrayContaining([draft.slug, review.slug, scheduled.slug]));
      expect(slugs).not.toContain(published.slug);
      expect(response.body.posts[0]).not.toHaveProperty('content');
      expect(response.body.total).toBe(response.body.posts.length);
    });

    it('lists published posts newest first with the total, without bodies', async () => {
      const first = await create({ status: 'published' });
      const second = await create({ status: 'published' });
      const response = await content.request('GET', '/blog?limit=2');
      expect(response.status).toBe(200);
      expect(response.body.posts.map((post: { slug: string }) => post.slug)).toEqual([second.slug, first.slug]);
      expect(response.body.posts[0]).not.toHaveProperty('content');
      expect(response.body.total).toBeGreaterThanOrEqual(2);
      expect(response.body.next_cursor).toBe(first.published_at);
    });

    it.each([['limit=0'], ['limit=101'], ['limit=abc'], ['cursor=yesterday'], ['unknown=1']])('refuses GET /blog?%s with 400', async (query) => {
      const response = await content.request('GET', `/blog?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    });
  });

  describe('update', () => {
    it('updates the given fields, records what changed, and keeps the rest', async () => {
      const post = await create({ content: 'old', tags: ['a'] });
      const response = await content.request('PATCH', `/blog/${post.slug}`, {
        auth: true,
        json: {
          title: 'A brand new title',
          content: 'new',
          description: 'A description that is long enough to pass the fifty character minimum.',
          author_name: 'Grace',
          author_email: 'grace@example.com',
          tags: ['b', 'c'],
          og_image_url: 'https://cdn.example.com/og.png',
          ...actor,
        },
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        slug: post.slug,
        title: 'A brand new title',
        content: 'new',
        author_name: 'Grace',
        author_email: 'grace@example.com',
        tags: ['b', 'c'],
        og_image_url: 'https://cdn.example.com/og.png',
        status: 'draft',
      });
      const entries = await activityOf(post.slug);
      expect(entries.at(-1)).toMatchObject({ action: 'updated' });
      expect(entries.at(-1)!.changes).toMatchObject({ content: ['old', 'new'], tags: [['a'], ['b', 'c']] });
    });

    it("shows the author's email to editors but never on public reads", async () => {
      const post = await create({ title: 'Emailed author post', status: 'published' });
      await content.request('PATCH', `/blog/${post.slug}`, { auth: true, json: { author_email: 'grace@example.com', ...actor } });

      const preview = await content.request('GET', `/blog/${post.slug}?preview=true`, { auth: true });
      expect(preview.body.author_email).toBe('grace@example.com');
      const single = await content.request('GET', `/blog/${post.slug}`);
      const list = await content.request('GET', '/blog');
      expect(single.status).toBe(200);
      expect(single.body).not.toHaveProperty('author_email');
      expect(list.body.posts.find((p: { slug: string }) => p.slug === post.slug)).not.toHaveProperty('author_email');
      expect(single.text + list.text).not.toContain('grace@example.com');
    });

    it('clears an optional field with null', async () => {
      const post = await create({ og_image_url: 'https://example.com/a.png' });
      const response = await content.request('PATCH', `/blog/${post.slug}`, { auth: true, json: { og_image_url: null, ...actor } });
      expect(response.status).toBe(200);
      expect(response.body.og_image_url).toBeNull();
    });

    it('asks for revalidation when a published post changes', async () => {
      const post = await create({ status: 'published' });
      await expectRevalidations(post.slug, 1);
      const response = await content.request('PATCH', `/blog/${post.slug}`, { auth: true, json: { content: 'edited', ...actor } });
      expect(response.status).toBe(200);
      await expectRevalidations(post.slug, 2);
    });

    it('records nothing when an update changes nothing', async () => {
      const post = await create({ content: 'same' });
      const entries = (await activityOf(post.slug)).length;
      const response = await content.request('PATCH', `/blog/${post.slug}`, { auth: true, json: { content: 'same', ...actor } });
      expect(response.status).toBe(200);
      expect((await activityOf(post.slug)).length).toBe(entries);
    });

    it.each([
      ['a short description', { description: 'short' }],
      ['a malformed author_email', { author_email: 'not-an-email' }],
      ['status (not updatable)', { status: 'published' }],
      ['slug (not updatable)', { slug: 'other' }],
    ])('refuses %s with 400 and changes nothing', async (_name, body) => {
      const post = await create();
      await expectRefusedUnchanged(post.slug, () => content.request('PATCH', `/blog/${post.slug}`, { auth: true, json: { ...body, ...actor } }), 400, 'invalid_request');
    });

    it('refuses an update with no fields (400)', async () => {
      const post = await create();
      await expectRefusedUnchanged(post.slug, () => content.request('PATCH', `/blog/${post.slug}`, { auth: true, json: actor }), 400, 'invalid_request');
    });

    it('answers 404 for an unknown post', async () => {
      const response = await content.request('PATCH', '/blog/no-such-post', { auth: true, json: { title: 'x', ...actor } });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    });
  });

  describe('workflow', () => {
    it('moves draft → review → published → archived, recording each move', async () => {
      const post = await create(readyPost);
      const submitted = await move(post.slug, 'submit');
      expect(submitted.status).toBe(200);
      expect(submitted.body.status).toBe('review');

      const approved = await move(post.slug, 'approve', { actor_id: 'editor', actor_type: 'human' });
      expect(approved.status).toBe(200);
      expect(approved.body.status).toBe('published');
      expect(approved.body.published_at).not.toBeNull();
      expect((await content.request('GET', `/blog/${post.slug}`)).body.status).toBe('published');

      await expectRevalidations(post.slug, 1);

      const archived = await move(post.slug, 'archive');
      expect(archived.status).toBe(200);
      expect(archived.body.status).toBe('archived');
      expect((await content.request('GET', `/blog/${post.slug}`)).status).toBe(404);
      await expectRevalidations(post.slug, 2);

      const actions = (await activityOf(post.slug)).map((entry) => [entry.action, entry.changes]);
      expect(actions).toEqual([
        ['created', {}],
        ['status_changed', { status: ['draft', 'review'] }],
        ['published', { status: ['review', 'published'], published_at: [null, approved.body.published_at] }],
        ['archived', { status: ['published', 'archived'] }],
      ]);
    });

    it('publishes from any state, skipping review', async () => {
      const draft = await create();
      const published = await move(draft.slug, 'publish');
      expect(published.status).toBe(200);
      expect(published.body.status).toBe('published');
    });

    it('keeps a post in its place when it is published again or re-published after archiving', async () => {
      const post = await create();
      const first = (await move(post.slug, 'publish')).body;
      const again = await move(post.slug, 'publish');
      expect(again.status).toBe(200);
      expect(again.body.published_at).toBe(first.published_at);
      expect((await activityOf(post.slug)).filter((entry) => entry.action === 'published')).toHaveLength(1);

      await move(post.slug, 'archive');
      const republished = (await move(post.slug, 'publish')).body;
      expect(republished.status).toBe('published');
      expect(republished.published_at).toBe(first.published_at);
    });

    it('refuses to submit a post that is not a draft (409 invalid_state naming the status)', async () => {
      const post = await create({ ...readyPost, status: 'published' });
      const error = await expectRefusedUnchanged(post.slug, () => move(post.slug, 'submit'), 409, 'invalid_state');
      expect(error.details).toEqual({ status: 'published' });
      expect(error.message).toContain('published');
    });

    it('refuses a submit failing validation with 422 listing every failing field', async () => {
      const post = await create({ title: 'Short', tags: [] });
      const error = await expectRefusedUnchanged(post.slug, () => move(post.slug, 'submit'), 422, 'validation_failed');
      expect(error.details.fields.map((field: { field: string }) => field.field)).toEqual(['title', 'description', 'content', 'tags']);
    });

    it('refuses a submit with too many or too long tags and a long title', async () => {
      const post = await create({ ...readyPost, title: 'T'.repeat(121), tags: Array.from({ length: 11 }, (_, n) => `tag${n}`) });
      const error = await expectRefusedUnchanged(post.slug, () => move(post.slug, 'submit'), 422, 'validation_failed');
      expect(error.details.fields.map((field: { field: string }) => field.field)).toEqual(['title', 'tags']);
      const longTag = await create({ ...readyPost, tags: ['x'.repeat(41)] });
      const tagError = await expectRefusedUnchanged(longTag.slug, () => move(longTag.slug, 'submit'), 422, 'validation_failed');
      expect(tagError.details.fields).toEqual([{ field: 'tags', message: 'each tag must be 1 to 40 characters' }]);
    });

    it.each(['draft', 'published', 'archived', 'scheduled'])('refuses to approve a %s post (409 invalid_state)', async (status) => {
      const post = await postIn(status);
      const error = await expectRefusedUnchanged(post.slug, () => move(post.slug, 'approve'), 409, 'invalid_state');
      expect(error.details).toEqual({ status });
    });

    it.each(['draft', 'review', 'archived', 'scheduled'])('refuses to archive a %s post (409 invalid_state)', async (status) => {
      const post = await postIn(status);
      const error = await expectRefusedUnchanged(post.slug, () => move(post.slug, 'archive'), 409, 'invalid_state');
      expect(error.details).toEqual({ status });
    });

    it('refuses approve without an actor (400)', async () => {
      const post = await postIn('review');
      await expectRefusedUnchanged(post.slug, () => move(post.slug, 'approve', {}), 400, 'invalid_request');
    });

    it.each(['submit', 'approve', 'publish', 'archive', 'schedule'])('answers 404 when %s names an unknown post', async (action) => {
      const body = action === 'schedule' ? { publish_at: new Date(Date.now() + 60_000).toISOString(), ...actor } : actor;
      const response = await move('no-such-post', action, body);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    });

    /** A post brought into the given status through the API. */
    async function postIn(status: string) {
      const post = await create(readyPost);
      if (status === 'review' || status === 'scheduled') {
        if (status === 'review') expect((await move(post.slug, 'submit')).status).toBe(200);
        else expect((await move(post.slug, 'schedule', { publish_at: new Date(Date.now() + 3_600_000).toISOString(), ...actor })).status).toBe(200);
      }
      if (status === 'published' || status === 'archived') expect((await move(post.slug, 'publish')).status).toBe(200);
      if (status === 'archived') expect((await move(post.slug, 'archive')).status).toBe(200);
      return post;
    }

    describe('delete', () => {
      it('deletes a draft for good and records it', async () => {
        const post = await create();
        const response = await content.request('DELETE', `/blog/${post.slug}`, { auth: true, json: actor });
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ slug: post.slug, deleted: true });
        expect((await content.request('GET', `/blog/${post.slug}?preview=true`, { auth: true })).status).toBe(404);
        expect((await activityOf(post.slug)).at(-1)).toMatchObject({ action: 'deleted', actorId: 'tester' });
      });

      it.each(['review', 'published', 'scheduled', 'archived'])('refuses to delete a %s post (409 invalid_state naming it)', async (status) => {
        const post = await postIn(status);
        const error = await expectRefusedUnchanged(
          post.slug,
          () => content.request('DELETE', `/blog/${post.slug}`, { auth: true, json: actor }),
          409,
          'invalid_state',
        );
        expect(error.details).toEqual({ status });
        expect(error.message).toContain(status);
      });

      it('refuses a delete without an actor body (400)', async () => {
        const post = await create();
        await expectRefusedUnchanged(post.slug, () => content.request('DELETE', `/blog/${post.slug}`, { auth: true }), 400, 'invalid_request');
      });
    });

    describe('schedule', () => {
      it('moves a draft or a post in review to scheduled with its publish time and one job', async () => {
        const publishAt = new Date(Date.now() + 3_600_000).toISOString();
        let jobsBefore = await publishJobs();
        for (const status of ['draft', 'review']) {
          const post = await postIn(status);
          const response = await move(post.slug, 'schedule', { publish_at: publishAt, ...actor });
          expect(response.status).toBe(200);
          expect(await publishJobs()).toBe(jobsBefore + 1);
          jobsBefore += 1;
          expect(response.body).toMatchObject({ status: 'scheduled', publish_at: publishAt.replace('Z', '000Z'), published_at: null });
          expect((await activityOf(post.slug)).at(-1)).toMatchObject({
            action: 'status_changed',
            changes: { status: [status, 'scheduled'], publish_at: [null, publishAt.replace('Z', '000Z')] },
          });
        }
      });

      it('refuses a publish_at in the past (400) and changes nothing', async () => {
        const post = await create();
        await expectRefusedUnchanged(post.slug, () => move(post.slug, 'schedule', { publish_at: '2020-01-01T00:00:00Z', ...actor }), 400, 'invalid_request');
      });

      it.each(['published', 'archived', 'scheduled'])('refuses to schedule a %s post (409 invalid_state)', async (status) => {
        const post = await postIn(status);
        const error = await expectRefusedUnchanged(
          post.slug,
          () => move(post.slug, 'schedule', { publish_at: new Date(Date.now() + 60_000).toISOString(), ...actor }),
          409,
          'invalid_state',
        );
        expect(error.details).toEqual({ status });
      });

      it('publishing a scheduled post by hand cancels its job', async () => {
        const post = await postIn('scheduled');
        const pending = await publishJobs();
        const published = await move(post.slug, 'publish');
        expect(published.body.status).toBe('published');
        expect(await publishJobs()).toBe(pending - 1);
      });
    });
  });

  describe('auth (spec 5.2)', () => {
    const writes: Array<[string, string]> = [
      ['POST', '/blog'],
      ['PATCH', '/blog/any-post'],
      ['POST', '/blog/any-post/submit'],
      ['POST', '/blog/any-post/approve'],
      ['POST', '/blog/any-post/publish'],
      ['POST', '/blog/any-post/archive'],
      ['POST', '/blog/any-post/schedule'],
      ['DELETE', '/blog/any-post'],
      ['GET', '/blog/drafts'],
      ['GET', '/blog/any-post?preview=true'],
    ];
    it.each(writes)('answers %s %s without the secret with 401 unauthorized', async (method, path) => {
      const json = method === 'GET' ? undefined : { title: 'Sneaky', ...actor };
      for (const headers of [{}, { authorization: 'Bearer wrong-secret' }] as Array<Record<string, string>>) {
        const response = await content.request(method, path, { json, headers });
        expect(response.status).toBe(401);
        expect(response.body.error.code).toBe('unauthorized');
        expect(response.headers.get('www-authenticate')).toBe('Bearer');
      }
    });

    it('creates nothing when the secret is missing', async () => {
      await content.request('POST', '/blog', { json: { title: 'Unauthorized post', ...actor } });
      expect((await content.request('GET', '/blog/unauthorized-post?preview=true', { auth: true })).status).toBe(404);
    });

    it('serves published reads without the secret', async () => {
      const post = await create({ status: 'published' });
      expect((await content.request('GET', '/blog')).status).toBe(200);
      expect((await content.request('GET', `/blog/${post.slug}`)).status).toBe(200);
      expect((await content.request('GET', `/blog/${post.slug}?preview=false`)).status).toBe(200);
    });
  });
});
