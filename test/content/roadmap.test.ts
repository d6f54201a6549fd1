import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

describe.each(engines)('roadmap items on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    content = await startContent(engine);
  });
  afterAll(() => content.close());

  const create = async (fields: Record<string, unknown>) => {
    const response = await content.request('POST', '/roadmap', { auth: true, json: { ...actor, ...fields } });
    expect(response.status, response.text).toBe(201);
    return response.body;
  };
  const read = (slug: string) => content.request('GET', `/roadmap/${slug}`, { auth: true });
  const activityOf = async (slug: string) =>
    (await content.request('GET', `/activity?resource=roadmap&resource_id=${slug}`, { auth: true })).body.entries;

  describe('create', () => {
    it('creates an item with the defaults of spec 2.8 and a slug derived from the title', async () => {
      const item = await create({ title: 'Dark mode for the dashboard' });
      expect(item).toMatchObject({
        slug: 'dark-mode-for-the-dashboard',
        title: 'Dark mode for the dashboard',
        description: null,
        summary: null,
        category: null,
        status: 'planned',
        priority: 'medium',
        quarter: null,
        public: true,
        votes: 0,
        shipped_at: null,
      });
      expect(Date.parse(item.created_at)).not.toBeNaN();
      const fetched = await content.request('GET', `/roadmap/${item.slug}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(item);
    });

    it('stores every field given', async () => {
      const item = await create({
        title: 'SSO with SAML',
        slug: 'saml-sso',
        description: '## Why\nEnterprise customers ask for it.',
        summary: 'Sign in through your identity provider',
        category: 'platform',
        status: 'in_progress',
        priority: 'critical',
        quarter: 'Q3 2026',
        public: false,
      });
      expect(item).toMatchObject({
        slug: 'saml-sso',
        description: '## Why\nEnterprise customers ask for it.',
        summary: 'Sign in through your identity provider',
        category: 'platform',
        status: 'in_progress',
        priority: 'critical',
        quarter: 'Q3 2026',
        public: false,
      });
    });

    it('records shipped_at when an item is created shipped', async () => {
      const item = await create({ title: 'Already out', status: 'shipped' });
      expect(item.status).toBe('shipped');
      expect(Date.parse(item.shipped_at)).not.toBeNaN();
    });

    it('makes derived slugs unique with -2, -3', async () => {
      const first = await create({ title: 'Webhooks v2' });
      const second = await create({ title: 'Webhooks v2' });
      const third = await create({ title: 'Webhooks  V2!' });
      expect([first.slug, second.slug, third.slug]).toEqual(['webhooks-v2', 'webhooks-v2-2', 'webhooks-v2-3']);
    });

    it('refuses a given slug that is taken with 409 conflict', async () => {
      await create({ title: 'Audit log', slug: 'audit-log' });
      const response = await content.request('POST', '/roadmap', { auth: true, json: { ...actor, title: 'Other', slug: 'audit-log' } });
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'conflict', details: { field: 'slug' } });
    });

    it('keeps the route names "all" and "bulk" free of items', async () => {
      const refused = await content.request('POST', '/roadmap', { auth: true, json: { ...actor, title: 'All', slug: 'all' } });
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('conflict');
      expect((await create({ title: 'All' })).slug).toBe('all-2');
      expect((await create({ title: 'Bulk' })).slug).toBe('bulk-2');
    });

    it('gives concurrent creates with one title distinct slugs', async () => {
      // More racers than any fixed retry budget: each must move on to the next free slug, never fail.
      const racers = 12;
      const responses = await Promise.all(
        Array.from({ length: racers }, () => content.request('POST', '/roadmap', { auth: true, json: { ...actor, title: 'Race condition' } })),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(racers).fill(201));
      const slugs = new Set(responses.map((response) => response.body.slug));
      expect(slugs).toEqual(new Set(['race-condition', ...Array.from({ length: racers - 1 }, (_, n) => `race-condition-${n + 2}`)]));
    });

    it.each([
      ['no title', { title: undefined }],
      ['an empty title', { title: '  ' }],
      ['a title over 200 characters', { title: 'x'.repeat(201) }],
      ['an unknown category', { category: 'marketing' }],
      ['an unknown status', { status: 'done' }],
      ['an unknown priority', { priority: 'urgent' }],
      ['a quarter not of the form Q<n> <year>', { quarter: 'Q5 2026' }],
      ['a lower-case quarter', { quarter: 'q1 2026' }],
      ['a malformed slug', { slug: 'Not A Slug' }],
      ['public as a string', { public: 'yes' }],
      ['an unknown field', { colour: 'red' }],
      ['no actor', { actor_id: undefined, actor_type: undefined }],
      ['an unknown actor type', { actor_type: 'robot' }],
    ])('refuses %s with 400 and writes nothing', async (_case, fields) => {
      const before = (await content.request('GET', '/roadmap/all?status=all', { auth: true })).body.total;
      const response = await content.request('POST', '/roadmap', {
        auth: true,
        json: { ...actor, title: 'Valid title', ...fields },
      });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect((await content.request('GET', '/roadmap/all?status=all', { auth: true })).body.total).toBe(before);
    });

    it('refuses malformed JSON with 400', async () => {
      const response = await content.request('POST', '/roadmap', { auth: true, json: '{"title": ' });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    });

    it('logs a created entry', async () => {
      const item = await create({ title: 'Logged creation' });
      expect(await activityOf(item.slug)).toMatchObject([{ action: 'created', actor_id: 'tester', actor_type: 'human' }]);
    });
  });

  describe('auth (spec 5.2)', () => {
    let slug: string;
    beforeAll(async () => {
      slug = (await create({ title: 'Protected writes' })).slug;
    });

    it.each([
      ['POST', '/roadmap', { title: 'x' }],
      ['GET', '/roadmap/all', undefined],
      ['PATCH', '/roadmap/SLUG', { title: 'x' }],
      ['POST', '/roadmap/SLUG/ship', {}],
      ['POST', '/roadmap/bulk', { items: [{ slug: 'SLUG', priority: 'low' }] }],
      ['DELETE', '/roadmap/SLUG', {}],
    ])('%s %s answers 401 without the secret and changes nothing', async (method, path, body) => {
      const route = path.replace('SLUG', slug);
      const json = body === undefined ? undefined : { ...actor, ...body };
      const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong-secret' }];
      for (const headers of attempts) {
        const response = await content.request(method, route, { json, headers });
        expect(response.status).toBe(401);
        expect(response.body.error.code).toBe('unauthorized');
        expect(response.headers.get('www-authenticate')).toBe('Bearer');
      }
      expect((await read(slug)).body).toMatchObject({ title: 'Protected writes', status: 'planned', priority: 'medium' });
    });

    it('serves public reads without the secret', async () => {
      expect((await content.request('GET', '/roadmap')).status).toBe(200);
      expect((await content.request('GET', `/roadmap/${slug}`)).status).toBe(200);
    });
  });

  describe('non-public items', () => {
    let hidden: string;
    beforeAll(async () => {
      hidden = (await create({ title: 'Secret project', public: false })).slug;
    });

    it('answers 404 to a public read and shows the item with the secret', async () => {
      const anonymous = await content.request('GET', `/roadmap/${hidden}`);
      expect(anonymous.status).toBe(404);
      expect(anonymous.body.error.code).toBe('not_found');
      const authenticated = await content.request('GET', `/roadmap/${hidden}`, { auth: true });
      expect(authenticated.status).toBe(200);
      expect(authenticated.body).toMatchObject({ slug: hidden, public: false });
    });

    it('answers 404 to a read with a wrong secret', async () => {
      const response = await content.request('GET', `/roadmap/${hidden}`, { headers: { authorization: 'Bearer wrong' } });
      expect(response.status).toBe(404);
    });

    it('becomes visible when made public and hidden again when not', async () => {
      await content.request('PATCH', `/roadmap/${hidden}`, { auth: true, json: { ...actor, public: true } });
      expect((await content.request('GET', `/roadmap/${hidden}`)).status).toBe(200);
      await content.request('PATCH', `/roadmap/${hidden}`, { auth: true, json: { ...actor, public: false } });
      expect((await content.request('GET', `/roadmap/${hidden}`)).status).toBe(404);
    });
  });

  describe('update', () => {
    it('updates any of the fields of spec 4.4 and logs the changes', async () => {
      const item = await create({ title: 'Exports', quarter: 'Q1 2026', category: 'product', summary: 'CSV' });
      const response = await content.request('PATCH', `/roadmap/${item.slug}`, {
        auth: true,
        json: { ...actor, title: 'Exports to CSV and XLSX', description: 'More formats', priority: 'high', quarter: 'Q2 2026', category: 'api' },
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        slug: item.slug,
        title: 'Exports to CSV and XLSX',
        description: 'More formats',
        priority: 'high',
        quarter: 'Q2 2026',
        category: 'api',
        summary: 'CSV',
      });
      expect(response.body.updated_at > item.updated_at).toBe(true);
      const [, updated] = await activityOf(item.slug);
      expect(updated).toMatchObject({
        action: 'updated',
        changes: { title: ['Exports', 'Exports to CSV and XLSX'], priority: ['medium', 'high'], quarter: ['Q1 2026', 'Q2 2026'] },
      });
    });

    it('clears optional fields given null', async () => {
      const item = await create({ title: 'Clearable', quarter: 'Q1 2026', summary: 'Short', category: 'dx' });
      const response = await content.request('PATCH', `/roadmap/${item.slug}`, {
        auth: true,
        json: { ...actor, quarter: null, summary: null, category: null },
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ quarter: null, summary: null, category: null });
    });

    it('moves any status to any other; entering shipped records shipped_at and leaving clears it (DESIGN 3)', async () => {
      const item = await create({ title: 'Status walk', status: 'considering' });
      const patch = (status: string) =>
        content.request('PATCH', `/roadmap/${item.slug}`, { auth: true, json: { ...actor, status } });
      for (const status of ['cancelled', 'planned', 'in_progress', 'considering']) {
        const response = await patch(status);
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ status, shipped_at: null });
      }
      const shipped = await patch('shipped');
      expect(shipped.body.status).toBe('shipped');
      expect(Date.parse(shipped.body.shipped_at)).not.toBeNaN();
      const reopened = await patch('in_progress');
      expect(reopened.body).toMatchObject({ status: 'in_progress', shipped_at: null });
      const entries = await activityOf(item.slug);
      expect(entries.map((entry: { action: string }) => entry.action)).toEqual([
        'created',
        ...Array(6).fill('status_changed'),
      ]);
      expect(entries[5].changes.status).toEqual(['considering', 'shipped']);
    });

    it('writes and logs nothing when the values are already those given', async () => {
      const item = await create({ title: 'Unchanged', priority: 'low' });
      const response = await content.request('PATCH', `/roadmap/${item.slug}`, { auth: true, json: { ...actor, priority: 'low', title: 'Unchanged' } });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(item);
      expect(await activityOf(item.slug)).toHaveLength(1);
    });

    it('refuses an update naming no field with 400', async () => {
      const item = await create({ title: 'Empty patch' });
      const response = await content.request('PATCH', `/roadmap/${item.slug}`, { auth: true, json: { ...actor } });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    });

    it.each([
      ['an unknown status', { status: 'done' }],
      ['a bad quarter', { quarter: '2026 Q1' }],
      ['a slug change', { slug: 'new-slug' }],
      ['votes', { votes: 1000 }],
      ['a null title', { title: null }],
    ])('refuses %s with 400 and changes nothing', async (_case, fields) => {
      const item = await create({ title: 'Guarded' });
      const response = await content.request('PATCH', `/roadmap/${item.slug}`, { auth: true, json: { ...actor, ...fields } });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect((await read(item.slug)).body).toEqual(item);
    });

    it('answers 404 for an unknown item', async () => {
      const response = await content.request('PATCH', '/roadmap/no-such-item', { auth: true, json: { ...actor, title: 'x' } });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    });
  });

  describe('ship', () => {
    it('ships an item with a note and a changelog version, recording shipped_at', async () => {
      const item = await create({ title: 'Ship me', status: 'in_progress' });
      const response = await content.request('POST', `/roadmap/${item.slug}/ship`, {
        auth: true,
        json: { ...actor, note: 'Available to everyone', changelog_version: 'v2.3.0' },
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: 'shipped', ship_note: 'Available to everyone', changelog_version: 'v2.3.0' });
      expect(Date.parse(response.body.shipped_at)).not.toBeNaN();
      const [, shipped] = await activityOf(item.slug);
      expect(shipped).toMatchObject({ action: 'status_changed', changes: { status: ['in_progress', 'shipped'] } });
    });

    it('ships from any status without a body beyond the actor', async () => {
      for (const status of ['planned', 'cancelled', 'considering']) {
        const item = await create({ title: `Ship from ${status}`, status });
        const response = await content.request('POST', `/roadmap/${item.slug}/ship`, { auth: true, json: actor });
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ status: 'shipped', ship_note: null, changelog_version: null });
      }
    });

    it('keeps the first shipped_at when a shipped item is shipped again, amending the note', async () => {
      const item = await create({ title: 'Ship twice' });
      const first = await content.request('POST', `/roadmap/${item.slug}/ship`, { auth: true, json: { ...actor, note: 'first' } });
      const second = await content.request('POST', `/roadmap/${item.slug}/ship`, { auth: true, json: { ...actor, note: 'second' } });
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({ shipped_at: first.body.shipped_at, ship_note: 'second' });
    });

    it('drops the ship note and version when the item leaves shipped', async () => {
      const item = await create({ title: 'Unship' });
      await content.request('POST', `/roadmap/${item.slug}/ship`, { auth: true, json: { ...actor, note: 'n', changelog_version: 'v1.0.0' } });
      const reopened = await content.request('PATCH', `/roadmap/${item.slug}`, { auth: true, json: { ...actor, status: 'planned' } });
      expect(reopened.body).toMatchObject({ status: 'planned', shipped_at: null, ship_note: null, changelog_version: null });
    });

    it.each([
      ['a version without v', { changelog_version: '1.2.3' }],
      ['a two-part version', { changelog_version: 'v1.2' }],
      ['an unknown field', { shipped_at: '2026-01-01' }],
    ])('refuses %s with 400 and changes nothing', async (_case, fields) => {
      const item = await create({ title: 'Ship refused' });
      const response = await content.request('POST', `/roadmap/${item.slug}/ship`, { auth: true, json: { ...actor, ...fields } });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect((await read(item.slug)).body).toEqual(item);
    });

    it('answers 404 for an unknown item', async () => {
      const response = await content.request('POST', '/roadmap/no-such-item/ship', { auth: true, json: actor });
      expect(response.status).toBe(404);
    });
  });

  describe('delete', () => {
    it('deletes an item that is not shipped, with its votes', async () => {
      const item = await create({ title: 'Delete me' });
      await content.request('POST', `/roadmap/${item.slug}/vote`, { json: { voter_id: 'v1' } });
      const response = await content.request('DELETE', `/roadmap/${item.slug}`, { auth: true, json: actor });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ slug: item.slug, deleted: true });
      expect((await read(item.slug)).status).toBe(404);
      const votes = await content.service.ctx.database.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM roadmap_votes`);
      expect(votes[0].n).toBe(0);
      expect((await activityOf(item.slug)).map((entry: { action: string }) => entry.action)).toEqual(['created', 'deleted']);
    });

    it('refuses to delete a shipped item with 409 invalid_state naming the status', async () => {
      const item = await create({ title: 'Shipped stays', status: 'shipped' });
      const response = await content.request('DELETE', `/roadmap/${item.slug}`, { auth: true, json: actor });
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'invalid_state', details: { status: 'shipped' } });
      expect(response.body.error.message).toContain('shipped');
      expect((await read(item.slug)).body).toEqual(item);
    });

    it('needs an actor, and answers 404 for an unknown item', async () => {
      const item = await create({ title: 'Delete needs actor' });
      expect((await content.request('DELETE', `/roadmap/${item.slug}`, { auth: true, json: {} })).status).toBe(400);
      expect((await read(item.slug)).status).toBe(200);
      expect((await content.request('DELETE', '/roadmap/no-such-item', { auth: true, json: actor })).status).toBe(404);
    });
  });

  describe('bulk update', () => {
    const bulk = (items: unknown, extra: Record<string, unknown> = {}) =>
      content.request('POST', '/roadmap/bulk', { auth: true, json: { ...actor, ...extra, items } });

    it('updates status, quarter and priority of several items, logging bulk_updated per item', async () => {
      const a = await create({ title: 'Bulk A' });
      const b = await create({ title: 'Bulk B', quarter: 'Q1 2026' });
      const c = await create({ title: 'Bulk C', public: false });
      const response = await bulk(
        [
          { slug: a.slug, status: 'in_progress', priority: 'high' },
          { slug: b.slug, quarter: null },
          { slug: c.slug, status: 'shipped', quarter: 'Q4 2026' },
        ],
        { actor_type: 'agent', actor_id: 'planner' },
      );
      expect(response.status).toBe(200);
      expect(response.body.items).toMatchObject([
        { slug: a.slug, status: 'in_progress', priority: 'high' },
        { slug: b.slug, quarter: null },
        { slug: c.slug, status: 'shipped', quarter: 'Q4 2026' },
      ]);
      expect(Date.parse(response.body.items[2].shipped_at)).not.toBeNaN();
      for (const [item, changes] of [
        [a, { status: ['planned', 'in_progress'], priority: ['medium', 'high'] }],
        [b, { quarter: ['Q1 2026', null] }],
        [c, { status: ['planned', 'shipped'], quarter: [null, 'Q4 2026'] }],
      ] as const) {
        const entries = await activityOf(item.slug);
        expect(entries).toHaveLength(2);
        expect(entries[1]).toMatchObject({ action: 'bulk_updated', actor_id: 'planner', actor_type: 'agent', changes });
      }
    });

    it('changes nothing when one slug is unknown (404)', async () => {
      const a = await create({ title: 'Bulk all or nothing' });
      const response = await bulk([
        { slug: a.slug, status: 'cancelled' },
        { slug: 'no-such-item', status: 'cancelled' },
      ]);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
      expect(response.body.error.message).toContain('no-such-item');
      expect((await read(a.slug)).body).toEqual(a);
      expect(await activityOf(a.slug)).toHaveLength(1);
    });

    it('takes 100 items in one request', async () => {
      const slugs: string[] = [];
      for (let batch = 0; batch < 5; batch++) {
        const created = await Promise.all(Array.from({ length: 20 }, (_, n) => create({ title: `Hundred ${batch * 20 + n}` })));
        slugs.push(...created.map((item) => item.slug));
      }
      const countBulk = async () =>
        (await content.request('GET', '/activity?action=bulk_updated&limit=200', { auth: true })).body.entries.length;
      const before = await countBulk();
      const response = await bulk(slugs.map((slug) => ({ slug, priority: 'low', quarter: 'Q2 2027' })));
      expect(response.status).toBe(200);
      expect(response.body.items).toHaveLength(100);
      expect(response.body.items.every((item: { priority: string; quarter: string }) => item.priority === 'low' && item.quarter === 'Q2 2027')).toBe(true);
      expect((await countBulk()) - before).toBe(100);
    });

    it.each([
      ['no items', []],
      ['101 items', Array.from({ length: 101 }, (_, index) => ({ slug: `item-${index}`, priority: 'low' }))],
      ['an item naming no field', [{ slug: 'x' }]],
      ['a slug twice', [{ slug: 'x', priority: 'low' }, { slug: 'x', priority: 'high' }]],
      ['a field bulk does not change', [{ slug: 'x', title: 'New' }]],
      ['an unknown status', [{ slug: 'x', status: 'done' }]],
      ['items that is not a list', { slug: 'x' }],
    ])('refuses %s with 400', async (_case, items) => {
      const response = await bulk(items);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    });
  });
});
