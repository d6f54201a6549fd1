/**
 * Changelog entries over REST (spec 2.7, 3.2, 4.4, 5.2, 7.2; DESIGN 3): every endpoint's success path, every
 * refusal with its exact status and code, and proof that a refused request changed nothing. Also the status
 * moves MCP update_changelog_entry makes through `setEntryStatus`.
 */
import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setEntryStatus } from '../../src/content/changelog/workflow.js';
import { activity, changelogEntries } from '../../src/content/schema.js';
import { orderedNow } from '../../src/platform/time.js';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';
import { startSite, type Site } from '../helpers/revalidation-site.js';

describe.each(engines)('changelog entries on %s', (engine) => {
  let content: TestContent;
  /** What the rendered site's revalidation hook received (DESIGN 3). */
  const revalidated: Array<{ type: string; slug: string }> = [];
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ onReceive: ({ body }) => revalidated.push(body) });
    content = await startContent(engine, { config: { revalidate: { url: site.url } } });
  });
  afterAll(async () => {
    await content.close();
    await site.close();
  });
  const expectRevalidations = (slug: string, times: number) =>
    vi.waitFor(() => expect(revalidated.filter((call) => call.slug === slug && call.type === 'changelog')).toHaveLength(times), {
      timeout: 5_000,
      interval: 50,
    });

  let minor = 0;
  const nextVersion = () => `v1.${++minor}.0`;
  async function create(fields: Record<string, unknown> = {}) {
    const response = await content.request('POST', '/changelog', { auth: true, json: { version: nextVersion(), content: 'Notes', ...fields, ...actor } });
    expect(response.status).toBe(201);
    return response.body;
  }
  const move = (identifier: string, action: string, body: Record<string, unknown> = actor) =>
    content.request('POST', `/changelog/${identifier}/${action}`, { auth: true, json: body });
  const preview = async (identifier: string) => (await content.request('GET', `/changelog/${identifier}?preview=true`, { auth: true })).body;
  const activityOf = (slug: string) =>
    content.service.ctx.db
      .select()
      .from(activity)
      .where(and(eq(activity.resource, 'changelog'), eq(activity.resourceId, slug)))
      .orderBy(asc(activity.createdAt));

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

  async function entryIn(status: 'draft' | 'review' | 'published') {
    const entry = await create();
    if (status === 'review') expect((await move(entry.slug, 'submit')).status).toBe(200);
    if (status === 'published') expect((await move(entry.slug, 'publish')).status).toBe(200);
    return entry;
  }

  describe('create', () => {
    it('creates a draft with the default slug, title and type', async () => {
      const response = await content.request('POST', '/changelog', { auth: true, json: { version: 'v2.10.3', ...actor } });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        slug: 'v2-10-3',
        version: 'v2.10.3',
        title: 'Release v2.10.3',
        summary: null,
        content: '',
        type: 'release',
        highlights: [],
        status: 'draft',
        published_at: null,
      });
      expect((await activityOf('v2-10-3')).map((entry) => entry.action)).toEqual(['created']);
    });

    it('takes every field and can publish at once', async () => {
      const entry = await create({
        slug: 'spring-release',
        title: 'The spring release',
        summary: 'Faster everything',
        content: '## Changes',
        type: 'beta',
        highlights: ['Speed', 'Search'],
        status: 'published',
      });
      expect(entry).toMatchObject({ slug: 'spring-release', type: 'beta', highlights: ['Speed', 'Search'], status: 'published' });
      expect(entry.published_at).not.toBeNull();
      expect((await content.request('GET', `/changelog/${entry.version}`)).body.slug).toBe('spring-release');
    });

    it('refuses a version that already has an entry with 409 conflict', async () => {
      const entry = await create();
      const response = await content.request('POST', '/changelog', { auth: true, json: { version: entry.version, slug: 'other-slug', ...actor } });
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'conflict', details: { field: 'version' } });
      expect((await content.request('GET', '/changelog/other-slug?preview=true', { auth: true })).status).toBe(404);
    });

    it('refuses a taken slug with 409 conflict', async () => {
      const entry = await create();
      const response = await content.request('POST', '/changelog', { auth: true, json: { version: nextVersion(), slug: entry.slug, ...actor } });
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'conflict', details: { field: 'slug' } });
    });

    it('gives one of two concurrent creates of a version the entry and the other 409', async () => {
      const version = nextVersion();
      const responses = await Promise.all(
        [0, 1].map(() => content.request('POST', '/changelog', { auth: true, json: { version, ...actor } })),
      );
      expect(responses.map((response) => response.status).sort()).toEqual([201, 409]);
    });

    it('refuses the slug "drafts", which /changelog/drafts already answers (409)', async () => {
      const response = await content.request('POST', '/changelog', { auth: true, json: { version: nextVersion(), slug: 'drafts', ...actor } });
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'conflict', details: { field: 'slug' } });
    });

    it('makes the default slug unique when another entry already uses it', async () => {
      const version = nextVersion();
      await create({ slug: version.replaceAll('.', '-') });
      const entry = await create({ version });
      expect(entry.slug).toBe(`${version.replaceAll('.', '-')}-2`);
    });

    it.each([
      ['no version', {}],
      ['a version without v', { version: '1.2.3' }],
      ['a two-part version', { version: 'v1.2' }],
      ['a pre-release suffix', { version: 'v1.2.3-beta' }],
      ['an unknown type', { version: 'v9.9.9', type: 'major' }],
      ['status review', { version: 'v9.9.9', status: 'review' }],
      ['a malformed slug', { version: 'v9.9.9', slug: 'v9.9.9' }],
      ['an unknown field', { version: 'v9.9.9', notes: 'x' }],
    ])('refuses %s with 400 invalid_request and writes nothing', async (_name, body) => {
      const response = await content.request('POST', '/changelog', { auth: true, json: { ...body, ...actor } });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect((await content.request('GET', '/changelog/v9.9.9?preview=true', { auth: true })).status).toBe(404);
    });
  });

  describe('read', () => {
    it('finds a published entry by slug or version, and hides drafts from public reads', async () => {
      const published = await entryIn('published');
      for (const identifier of [published.slug, published.version]) {
        const response = await content.request('GET', `/changelog/${identifier}`);
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ slug: published.slug, content: 'Notes' });
      }
      const draft = await create();
      expect((await content.request('GET', `/changelog/${draft.version}`)).status).toBe(404);
      const previewed = await content.request('GET', `/changelog/${draft.version}?preview=true`, { auth: true });
      expect(previewed.status).toBe(200);
      expect(previewed.body.status).toBe('draft');
    });

    it('lists draft and review entries under /changelog/drafts', async () => {
      const draft = await entryIn('draft');
      const review = await entryIn('review');
      const published = await entryIn('published');
      const response = await content.request('GET', '/changelog/drafts?limit=100', { auth: true });
      expect(response.status).toBe(200);
      const slugs = response.body.entries.map((entry: { slug: string }) => entry.slug);
      expect(slugs).toEqual(expect.arrayContaining([draft.slug, review.slug]));
      expect(slugs).not.toContain(published.slug);
      expect(response.body.entries[0]).not.toHaveProperty('content');
    });

    it('lists published entries newest first, filters by type, and pages by cursor without repeats', async () => {
      // Twenty hotfixes published in one statement, so they share a millisecond.
      await content.service.ctx.db.insert(changelogEntries).values(
        Array.from({ length: 20 }, (_, n) => ({
          slug: `v7-0-${n}`,
          version: `v7.0.${n}`,
          title: `Hotfix ${n}`,
          type: 'hotfix',
          status: 'published',
          publishedAt: orderedNow() as unknown as string,
          createdAt: orderedNow() as unknown as string,
        })),
      );
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const response = await content.request('GET', `/changelog?type=hotfix&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(response.status).toBe(200);
        expect(response.body.total).toBe(20);
        for (const entry of response.body.entries) {
          expect(entry.type).toBe('hotfix');
          expect(entry).not.toHaveProperty('content');
        }
        seen.push(...response.body.entries.map((entry: { slug: string }) => entry.slug));
        cursor = response.body.next_cursor;
      } while (cursor);
      expect(new Set(seen).size).toBe(20);
      expect(seen).toHaveLength(20);

      const all = await content.request('GET', '/changelog?limit=100');
      expect(all.body.entries.every((entry: { status: string }) => entry.status === 'published')).toBe(true);
      const times = all.body.entries.map((entry: { published_at: string }) => entry.published_at);
      expect([...times].sort().reverse()).toEqual(times);
    });

    it.each([['limit=0'], ['limit=101'], ['type=major'], ['cursor=soon']])('refuses GET /changelog?%s with 400', async (query) => {
      const response = await content.request('GET', `/changelog?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    });
  });

  describe('update', () => {
    it('revalidates on publish and on an update of a published entry, not on a draft edit', async () => {
      const entry = await create();
      await content.request('PATCH', `/changelog/${entry.slug}`, { auth: true, json: { summary: 'Draft edit', ...actor } });
      await move(entry.slug, 'publish');
      await expectRevalidations(entry.slug, 1);
      await content.request('PATCH', `/changelog/${entry.slug}`, { auth: true, json: { summary: 'Live edit', ...actor } });
      await expectRevalidations(entry.slug, 2);
    });

    it('updates title, summary, content, type and highlights by version, recording the changes', async () => {
      const entry = await create();
      const response = await content.request('PATCH', `/changelog/${entry.version}`, {
        auth: true,
        json: { title: 'New title', summary: 'Short', content: 'More notes', type: 'hotfix', highlights: ['One'], ...actor },
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ title: 'New title', summary: 'Short', content: 'More notes', type: 'hotfix', highlights: ['One'] });
      expect((await activityOf(entry.slug)).at(-1)).toMatchObject({ action: 'updated', changes: { type: ['release', 'hotfix'] } });
    });

    it.each([
      ['version', { version: 'v8.0.0' }],
      ['status', { status: 'published' }],
      ['an unknown type', { type: 'major' }],
      ['no fields', {}],
    ])('refuses an update of %s with 400 and changes nothing', async (_name, body) => {
      const entry = await create();
      await expectRefusedUnchanged(entry.slug, () => content.request('PATCH', `/changelog/${entry.slug}`, { auth: true, json: { ...body, ...actor } }), 400, 'invalid_request');
    });
  });

  describe('workflow', () => {
    it('moves draft → review → published, by slug or version', async () => {
      const entry = await create();
      const submitted = await move(entry.version, 'submit');
      expect(submitted.status).toBe(200);
      expect(submitted.body.status).toBe('review');
      const approved = await move(entry.slug, 'approve');
      expect(approved.status).toBe(200);
      expect(approved.body.status).toBe('published');
      expect((await activityOf(entry.slug)).map((row) => [row.action, row.changes])).toEqual([
        ['created', {}],
        ['status_changed', { status: ['draft', 'review'] }],
        ['published', { status: ['review', 'published'], published_at: [null, approved.body.published_at] }],
      ]);
    });

    it('publishes from draft or review directly and keeps published_at when published again', async () => {
      for (const status of ['draft', 'review'] as const) {
        const entry = await entryIn(status);
        const published = await move(entry.slug, 'publish');
        expect(published.status).toBe(200);
        expect(published.body.status).toBe('published');
        const again = await move(entry.slug, 'publish');
        expect(again.body.published_at).toBe(published.body.published_at);
        expect((await activityOf(entry.slug)).filter((row) => row.action === 'published')).toHaveLength(1);
      }
    });

    it('refuses a submit failing validation with 422 listing every failing field', async () => {
      const entry = await create({ content: '   ' });
      // The title defaults to "Release <version>"; blank it through the database as an older row might be.
      await content.service.ctx.db.update(changelogEntries).set({ title: ' ' }).where(eq(changelogEntries.slug, entry.slug));
      const error = await expectRefusedUnchanged(entry.slug, () => move(entry.slug, 'submit'), 422, 'validation_failed');
      expect(error.details.fields.map((field: { field: string }) => field.field)).toEqual(['title', 'content']);
    });

    it.each(['review', 'published'] as const)('refuses to submit an entry in %s (409 invalid_state)', async (status) => {
      const entry = await entryIn(status);
      const error = await expectRefusedUnchanged(entry.slug, () => move(entry.slug, 'submit'), 409, 'invalid_state');
      expect(error.details).toEqual({ status });
    });

    it.each(['draft', 'published'] as const)('refuses to approve a %s entry (409 invalid_state)', async (status) => {
      const entry = await entryIn(status);
      const error = await expectRefusedUnchanged(entry.slug, () => move(entry.slug, 'approve'), 409, 'invalid_state');
      expect(error.details).toEqual({ status });
      expect(error.message).toContain(status);
    });

    it.each(['submit', 'approve', 'publish'])('answers 404 when %s names an unknown entry', async (action) => {
      const response = await move('v99.99.99', action);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    });

    it('deletes a draft for good', async () => {
      const entry = await create();
      const response = await content.request('DELETE', `/changelog/${entry.version}`, { auth: true, json: actor });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ slug: entry.slug, version: entry.version, deleted: true });
      expect((await content.request('GET', `/changelog/${entry.slug}?preview=true`, { auth: true })).status).toBe(404);
      expect((await activityOf(entry.slug)).at(-1)!.action).toBe('deleted');
    });

    it.each(['review', 'published'] as const)('refuses to delete an entry in %s (409 invalid_state naming it)', async (status) => {
      const entry = await entryIn(status);
      const error = await expectRefusedUnchanged(
        entry.slug,
        () => content.request('DELETE', `/changelog/${entry.slug}`, { auth: true, json: actor }),
        409,
        'invalid_state',
      );
      expect(error.details).toEqual({ status });
      expect(error.message).toContain(status);
    });
  });

  describe('status moves of MCP update_changelog_entry (spec 3.2)', () => {
    const agent = { actor_id: 'claude', actor_type: 'agent' } as const;

    it('moves draft → review and review → published', async () => {
      const entry = await create();
      expect((await setEntryStatus(content.service.ctx, entry.slug, 'review', agent)).status).toBe('review');
      expect((await setEntryStatus(content.service.ctx, entry.version, 'published', agent)).status).toBe('published');
      expect((await activityOf(entry.slug)).map((row) => [row.action, row.actorType])).toEqual([
        ['created', 'human'],
        ['status_changed', 'agent'],
        ['published', 'agent'],
      ]);
    });

    it('refuses to set a draft straight to published with invalid_state, changing nothing', async () => {
      const entry = await create();
      await expectRefusedUnchanged(
        entry.slug,
        async () => {
          const error = await setEntryStatus(content.service.ctx, entry.slug, 'published', agent).then(
            () => undefined,
            (thrown) => thrown,
          );
          return { status: error?.status, body: error?.toJSON() };
        },
        409,
        'invalid_state',
      );
    });

    it('refuses to move an entry back to draft, and treats its current status as a no-op', async () => {
      const entry = await entryIn('review');
      await expect(setEntryStatus(content.service.ctx, entry.slug, 'draft', agent)).rejects.toMatchObject({ code: 'invalid_state', status: 409 });
      const same = await setEntryStatus(content.service.ctx, entry.slug, 'review', agent);
      expect(same.status).toBe('review');
      expect((await activityOf(entry.slug)).length).toBe(2);
    });
  });

  describe('auth (spec 5.2)', () => {
    it.each([
      ['POST', '/changelog'],
      ['PATCH', '/changelog/v1.0.0'],
      ['POST', '/changelog/v1.0.0/submit'],
      ['POST', '/changelog/v1.0.0/approve'],
      ['POST', '/changelog/v1.0.0/publish'],
      ['DELETE', '/changelog/v1.0.0'],
      ['GET', '/changelog/drafts'],
      ['GET', '/changelog/v1.0.0?preview=true'],
    ])('answers %s %s without the secret with 401 unauthorized', async (method, path) => {
      const json = method === 'GET' ? undefined : { version: 'v1.0.0', ...actor };
      const response = await content.request(method, path, { json });
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('unauthorized');
    });

    it('serves published reads without the secret', async () => {
      const entry = await entryIn('published');
      expect((await content.request('GET', '/changelog')).status).toBe(200);
      expect((await content.request('GET', `/changelog/${entry.version}`)).status).toBe(200);
    });
  });
});
