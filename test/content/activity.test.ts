import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordActivity } from '../../src/content/activity.js';
import { startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

interface Entry {
  id: string;
  resource: string;
  resource_id: string;
  action: string;
  actor_id: string;
  actor_type: string;
  summary: string;
  changes: Record<string, [unknown, unknown]>;
  created_at: string;
}

const alice = { actor_id: 'alice', actor_type: 'human' } as const;
const bot = { actor_id: 'planner-bot', actor_type: 'agent' } as const;
const cron = { actor_id: 'nightly', actor_type: 'system' } as const;

describe.each(engines)('activity log on %s', (engine) => {
  let content: TestContent;

  const write = async (method: string, path: string, json: Record<string, unknown>) => {
    const response = await content.request(method, path, { auth: true, json });
    expect(response.status, response.text).toBeLessThan(300);
    return response.body;
  };
  const log = async (query = '') => {
    const response = await content.request('GET', `/activity?${query}`, { auth: true });
    expect(response.status, response.text).toBe(200);
    return response.body as { entries: Entry[]; next_cursor: string | null };
  };
  /** The whole log, oldest first, as the service sees it. */
  const everything = async () => (await log('limit=200')).entries;

  beforeAll(async () => {
    content = await startContent(engine);
    await write('POST', '/roadmap', { ...alice, title: 'Search filters' });
    await write('POST', '/roadmap', { ...bot, title: 'Saved views', priority: 'high' });
    await write('PATCH', '/roadmap/search-filters', { ...alice, summary: 'Filter by date' });
    await write('PATCH', '/roadmap/saved-views', { ...bot, status: 'in_progress' });
    await write('POST', '/roadmap/bulk', {
      ...cron,
      items: [
        { slug: 'search-filters', quarter: 'Q3 2026' },
        { slug: 'saved-views', priority: 'critical' },
      ],
    });
    await write('POST', '/roadmap/saved-views/ship', { ...bot, note: 'Done' });
    await write('POST', '/roadmap', { ...alice, title: 'Throwaway' });
    await write('DELETE', '/roadmap/throwaway', alice);
    // Entries of another resource, written by the shared recorder every content module uses.
    for (let n = 0; n < 50; n++) {
      await recordActivity(content.service.ctx.db, cron, {
        resource: 'blog',
        resourceId: `post-${n}`,
        action: 'published',
        summary: `published post ${n}`,
      });
    }
  });
  afterAll(() => content.close());

  it('needs the secret', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Array<Record<string, string>>) {
      const response = await content.request('GET', '/activity', { headers });
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('unauthorized');
    }
  });

  it('lists entries oldest first with who, what, when and the changed fields', async () => {
    const entries = (await log('resource=roadmap')).entries;
    const rows = entries.map((entry) => [entry.resource_id, entry.action, entry.actor_id]);
    // The two bulk entries are written in one transaction, within one millisecond: their order relative to
    // each other is stable but not defined (platform/time.ts), so compare them as a set.
    rows.splice(4, 2, ...rows.slice(4, 6).sort());
    expect(rows).toEqual([
      ['search-filters', 'created', 'alice'],
      ['saved-views', 'created', 'planner-bot'],
      ['search-filters', 'updated', 'alice'],
      ['saved-views', 'status_changed', 'planner-bot'],
      ['saved-views', 'bulk_updated', 'nightly'],
      ['search-filters', 'bulk_updated', 'nightly'],
      ['saved-views', 'status_changed', 'planner-bot'],
      ['throwaway', 'created', 'alice'],
      ['throwaway', 'deleted', 'alice'],
    ]);
    expect(entries[2]).toEqual({
      id: expect.any(String),
      resource: 'roadmap',
      resource_id: 'search-filters',
      action: 'updated',
      actor_id: 'alice',
      actor_type: 'human',
      summary: expect.stringContaining('summary'),
      changes: { summary: [null, 'Filter by date'] },
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
    });
    const times = entries.map((entry) => entry.created_at);
    expect([...times].sort()).toEqual(times);
    expect(new Set(times).size).toBe(times.length);
  });

  it('records one bulk_updated entry per item of a bulk update, with its changes', async () => {
    const entries = (await log('action=bulk_updated')).entries;
    expect(entries).toHaveLength(2);
    const bySlug = Object.fromEntries(entries.map((entry) => [entry.resource_id, entry]));
    expect(bySlug).toMatchObject({
      'search-filters': { actor_id: 'nightly', actor_type: 'system', changes: { quarter: [null, 'Q3 2026'] } },
      'saved-views': { actor_id: 'nightly', actor_type: 'system', changes: { priority: ['high', 'critical'] } },
    });
  });

  it.each([
    ['resource=blog', (entry: Entry) => entry.resource === 'blog'],
    ['resource=roadmap&resource_id=saved-views', (entry: Entry) => entry.resource === 'roadmap' && entry.resource_id === 'saved-views'],
    ['actor_type=agent', (entry: Entry) => entry.actor_type === 'agent'],
    ['actor_type=system&resource=roadmap', (entry: Entry) => entry.actor_type === 'system' && entry.resource === 'roadmap'],
    ['action=status_changed', (entry: Entry) => entry.action === 'status_changed'],
    ['action=deleted', (entry: Entry) => entry.action === 'deleted'],
    ['action=archived', (entry: Entry) => entry.action === 'archived'],
  ])('filters by %s', async (query, matches) => {
    const expected = (await everything()).filter(matches);
    const entries = (await log(`${query}&limit=200`)).entries;
    expect(entries).toEqual(expected);
    if (!query.includes('archived')) expect(entries.length).toBeGreaterThan(0);
  });

  it('takes entries strictly after and strictly before given times', async () => {
    const all = await everything();
    const middle = all[4].created_at;
    expect((await log(`after=${middle}&limit=200`)).entries).toEqual(all.slice(5));
    expect((await log(`before=${middle}&limit=200`)).entries).toEqual(all.slice(0, 4));
    expect((await log(`after=${all[1].created_at}&before=${all[4].created_at}`)).entries).toEqual(all.slice(2, 4));
  });

  it('accepts dates with offsets and plain dates', async () => {
    const all = await everything();
    expect((await log('after=2000-01-01&limit=200')).entries).toEqual(all);
    expect((await log('after=2000-01-01T02:00:00%2B02:00&limit=200')).entries).toEqual(all);
    expect((await log('before=2000-01-01')).entries).toEqual([]);
  });

  it('shows 50 entries by default and up to 200', async () => {
    const all = await everything();
    expect(all.length).toBeGreaterThan(50);
    const first = await log();
    expect(first.entries).toEqual(all.slice(0, 50));
    expect(first.next_cursor).toBe(all[49].created_at);
  });

  it('pages with next_cursor without skipping or repeating entries, also with filters', async () => {
    for (const [filter, limit] of [['', 7], ['resource=roadmap&', 2], ['actor_type=system&', 13]] as const) {
      const expected = (await log(`${filter}limit=200`)).entries;
      const seen: Entry[] = [];
      let cursor: string | null = null;
      do {
        const page = await log(`${filter}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...page.entries);
        cursor = page.next_cursor;
      } while (cursor);
      expect(seen).toEqual(expected);
    }
  });

  it('answers next_cursor null on the last page', async () => {
    const page = await log('resource=roadmap&limit=200');
    expect(page.next_cursor).toBeNull();
  });

  it.each([
    ['limit=0'],
    ['limit=201'],
    ['after=yesterday'],
    ['before=2026-13-01'],
    ['cursor=abc'],
    ['resource=users'],
    ['action=voted'],
    ['actor_type=robot'],
    ['order=newest'],
  ])('refuses %s with 400', async (query) => {
    const response = await content.request('GET', `/activity?${query}`, { auth: true });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
  });
});
