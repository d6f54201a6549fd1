import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

interface Item {
  slug: string;
  status: string;
  priority: string;
  category: string | null;
  quarter: string | null;
  public: boolean;
  votes: number;
  updated_at: string;
}

const STATUSES = ['planned', 'in_progress', 'shipped', 'cancelled', 'considering'];
const RANK: Record<string, number> = { critical: 4, high: 3, medium: 2, low: 1 };

/** The orders of spec 4.4 / DESIGN 3, written independently of the service. */
const newestFirst = (a: Item, b: Item) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0);
const byVotes = (a: Item, b: Item) => b.votes - a.votes || newestFirst(a, b);
const byPriority = (a: Item, b: Item) => RANK[b.priority] - RANK[a.priority] || byVotes(a, b);
const ORDERS = { priority: byPriority, votes: byVotes, updated_at: newestFirst } as const;

describe.each(engines)('roadmap lists on %s', (engine) => {
  let content: TestContent;
  /** The five `dx` items whose order is spelled out by hand. */
  const hand: Record<string, string> = {};

  const create = async (fields: Record<string, unknown>): Promise<Item> => {
    const response = await content.request('POST', '/roadmap', { auth: true, json: { ...actor, ...fields } });
    expect(response.status, response.text).toBe(201);
    return response.body;
  };
  const vote = async (slug: string, times: number, voter = 'voter') => {
    for (let n = 0; n < times; n++) {
      const response = await content.request('POST', `/roadmap/${slug}/vote`, { json: { voter_id: `${voter}-${n}` } });
      expect(response.status).toBe(200);
    }
  };
  const list = async (query: string, auth = false) => {
    const response = await content.request('GET', `/roadmap${auth ? '/all' : ''}?${query}`, { auth });
    expect(response.status, response.text).toBe(200);
    return response.body as { items: Item[]; next_cursor: string | null; total: number; by_status: Record<string, number> };
  };
  /** Every item of a listing, from the database's own view with the secret. */
  const everything = async () => (await list('limit=100', true)).items;

  const pageThrough = async (query: string, limit: number, auth = false) => {
    const seen: Item[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await list(`${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, auth);
      expect(page.items.length).toBeLessThanOrEqual(limit);
      seen.push(...page.items);
      cursor = page.next_cursor;
      pages++;
      expect(pages).toBeLessThan(100);
    } while (cursor);
    return seen;
  };

  beforeAll(async () => {
    content = await startContent(engine);
    // Hand-ordered: P1 critical; P2, P3 high with 5 votes each (P3 edited last); P4 high 2 votes; P5 low 10 votes.
    for (const [name, priority, votes] of [
      ['P1', 'critical', 0],
      ['P2', 'high', 5],
      ['P3', 'high', 5],
      ['P4', 'high', 2],
      ['P5', 'low', 10],
    ] as const) {
      hand[name] = (await create({ title: `Hand ${name}`, priority, category: 'dx', quarter: 'Q4 2027' })).slug;
      await vote(hand[name], votes);
    }
    await content.request('PATCH', `/roadmap/${hand.P3}`, { auth: true, json: { ...actor, summary: 'edited last' } });

    // 60 more items with many ties in priority and votes, every seventh one non-public.
    const categories = ['product', 'platform', 'integrations', 'api'];
    for (let n = 0; n < 60; n++) {
      const item = await create({
        title: `Item ${n}`,
        priority: ['low', 'medium', 'high', 'critical'][n % 4],
        category: categories[Math.floor(n / 4) % 4],
        quarter: n % 3 === 0 ? 'Q1 2026' : 'Q2 2026',
        status: STATUSES[n % 5],
        public: n % 7 !== 3,
      });
      if (item.public) await vote(item.slug, n % 3);
    }
  });
  afterAll(() => content.close());

  describe('sorting', () => {
    it('sorts by priority (critical first), then votes, then most recently updated by default', async () => {
      const page = await list('category=dx');
      expect(page.items.map((item) => item.slug)).toEqual([hand.P1, hand.P3, hand.P2, hand.P4, hand.P5]);
      expect((await list('category=dx&sort=priority')).items).toEqual(page.items);
    });

    it('sorts by votes, ties by most recently updated', async () => {
      const page = await list('category=dx&sort=votes');
      expect(page.items.map((item) => item.slug)).toEqual([hand.P5, hand.P3, hand.P2, hand.P4, hand.P1]);
      expect(page.items.map((item) => item.votes)).toEqual([10, 5, 5, 2, 0]);
    });

    it('sorts by updated_at, most recent first; votes do not count as an update', async () => {
      const page = await list('category=dx&sort=updated_at');
      expect(page.items.map((item) => item.slug)).toEqual([hand.P3, hand.P5, hand.P4, hand.P2, hand.P1]);
    });

    it.each(['priority', 'votes', 'updated_at'] as const)('orders the whole public roadmap by %s', async (sort) => {
      const all = (await everything()).filter((item) => item.public);
      const page = await list(`sort=${sort}&limit=100`);
      expect(page.items.map((item) => item.slug)).toEqual([...all].sort(ORDERS[sort]).map((item) => item.slug));
    });
  });

  describe('filters and counts', () => {
    it('shows only public items, 50 by default', async () => {
      const all = await everything();
      const publicItems = all.filter((item) => item.public);
      expect(publicItems.length).toBeGreaterThan(50);
      expect(publicItems.length).toBeLessThan(all.length);
      const page = await list('');
      expect(page.items).toHaveLength(50);
      expect(page.items.every((item) => item.public)).toBe(true);
      expect(page.total).toBe(publicItems.length);
      expect(page.next_cursor).not.toBeNull();
    });

    it.each([
      ['status=in_progress', (item: Item) => item.status === 'in_progress'],
      ['status=all', () => true],
      ['category=platform', (item: Item) => item.category === 'platform'],
      ['quarter=Q1%202026', (item: Item) => item.quarter === 'Q1 2026'],
      ['status=shipped&category=api&quarter=Q2%202026', (item: Item) => item.status === 'shipped' && item.category === 'api' && item.quarter === 'Q2 2026'],
    ])('filters by %s, with total and by_status over the public items', async (query, matches) => {
      const publicItems = (await everything()).filter((item) => item.public);
      const expected = publicItems.filter(matches).sort(byPriority);
      const page = await list(`${query}&limit=100`);
      expect(page.items.map((item) => item.slug)).toEqual(expected.map((item) => item.slug));
      expect(page.total).toBe(expected.length);
      expect(page.next_cursor).toBeNull();
    });

    it('counts by_status over the items matching the other filters, whatever the status filter', async () => {
      const platform = (await everything()).filter((item) => item.public && item.category === 'platform');
      const expected = Object.fromEntries(STATUSES.map((status) => [status, platform.filter((item) => item.status === status).length]));
      for (const status of ['all', 'planned', 'cancelled']) {
        const page = await list(`category=platform&status=${status}`);
        expect(page.by_status).toEqual(expected);
        expect(page.total).toBe(status === 'all' ? platform.length : expected[status]);
      }
      expect(Object.values(expected).some((count) => count > 0)).toBe(true);
    });

    it('reports zero for every status when nothing matches', async () => {
      const page = await list('quarter=Q1%201999');
      expect(page).toEqual({ items: [], next_cursor: null, total: 0, by_status: Object.fromEntries(STATUSES.map((s) => [s, 0])) });
    });

    it.each([
      ['limit=0'],
      ['limit=101'],
      ['limit=ten'],
      ['limit=2.5'],
      ['status=done'],
      ['category=marketing'],
      ['quarter=Q9%202026'],
      ['sort=title'],
      ['colour=red'],
    ])('refuses %s with 400', async (query) => {
      const response = await content.request('GET', `/roadmap?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    });

    it('takes a limit of 100', async () => {
      const page = await list('limit=100');
      expect(page.items).toHaveLength(page.total);
    });
  });

  describe('all items (auth)', () => {
    it('needs the secret', async () => {
      const response = await content.request('GET', '/roadmap/all');
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('unauthorized');
    });

    it('includes non-public items in the items, total and by_status, with the same filters', async () => {
      const all = await everything();
      const hidden = all.filter((item) => !item.public);
      expect(hidden.length).toBeGreaterThan(0);
      const page = await list('status=all&category=integrations&limit=100', true);
      const expected = all.filter((item) => item.category === 'integrations');
      expect(page.items.map((item) => item.slug)).toEqual(expected.sort(byPriority).map((item) => item.slug));
      expect(page.items.some((item) => !item.public)).toBe(true);
      expect(Object.values(page.by_status).reduce((sum, count) => sum + count, 0)).toBe(expected.length);
    });
  });

  describe('paging', () => {
    it.each(['priority', 'votes', 'updated_at'] as const)('pages through every sort by %s without skipping or repeating', async (sort) => {
      const expected = (await list(`sort=${sort}&limit=100`)).items.map((item) => item.slug);
      for (const limit of [1, 4, 7]) {
        const seen = (await pageThrough(`sort=${sort}`, limit)).map((item) => item.slug);
        expect(seen).toEqual(expected);
      }
    });

    it('pages through a filtered list and the authenticated list', async () => {
      const filtered = (await list('quarter=Q2%202026&limit=100')).items.map((item) => item.slug);
      expect((await pageThrough('quarter=Q2%202026', 3)).map((item) => item.slug)).toEqual(filtered);
      const all = (await everything()).map((item) => item.slug);
      expect((await pageThrough('sort=priority', 6, true)).map((item) => item.slug)).toEqual(all);
    });

    it('gives the ISO updated_at of the last item as the cursor when sorted by updated_at (spec 8)', async () => {
      const page = await list('sort=updated_at&limit=3');
      expect(page.next_cursor).toBe(page.items[2].updated_at);
      expect(page.next_cursor).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    });

    it.each([
      ['sort=priority', 'not-a-cursor'],
      ['sort=priority', '2026-01-01T00:00:00Z'],
      ['sort=updated_at', 'WyJwcmlvcml0eSIsMywxLCIyMDI2LTAxLTAxVDAwOjAwOjAwLjAwMDAwMFoiXQ'],
      ['sort=votes', 'WyJwcmlvcml0eSIsMywxLCIyMDI2LTAxLTAxVDAwOjAwOjAwLjAwMDAwMFoiXQ'],
      ['sort=votes', Buffer.from('["votes",-1,"2026-01-01"]').toString('base64url')],
    ])('refuses a cursor that is not a next_cursor of that sort (%s, %s) with 400', async (sort, cursor) => {
      const response = await content.request('GET', `/roadmap?${sort}&cursor=${encodeURIComponent(cursor)}`);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    });

    it('accepts a priority cursor it issued', async () => {
      const first = await list('sort=priority&limit=2');
      expect(first.next_cursor).not.toBeNull();
      const second = await list(`sort=priority&limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`);
      expect(second.items).toHaveLength(2);
      expect(second.items.map((item) => item.slug)).not.toContain(first.items[0].slug);
    });

    // Last: it changes vote counts.
    it('neither skips nor repeats items when the last item of a page gains votes before the next page', async () => {
      const order = (await list('sort=priority&limit=100')).items.map((item) => item.slug);
      const first = await list('sort=priority&limit=10');
      expect(first.items.map((item) => item.slug)).toEqual(order.slice(0, 10));
      await vote(order[9], 3, 'late-voter');
      expect((await content.request('GET', `/roadmap/${order[9]}`)).body.votes).toBeGreaterThanOrEqual(3);
      const second = await list(`sort=priority&limit=10&cursor=${encodeURIComponent(first.next_cursor!)}`);
      expect(second.items.map((item) => item.slug)).toEqual(order.slice(10, 20));
    });
  });
});
