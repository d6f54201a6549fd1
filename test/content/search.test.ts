import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blogPosts, changelogEntries } from '../../src/content/schema.js';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

interface Result {
  slug: string;
  title: string;
  description: string | null;
  type: string;
  status?: string;
}

describe.each(engines)('search on %s', (engine) => {
  let content: TestContent;

  /** Posts and entries are written straight to their tables, so these tests depend on search alone. */
  const post = (slug: string, title: string, fields: Partial<typeof blogPosts.$inferInsert> = {}) =>
    content.service.ctx.db.insert(blogPosts).values({
      slug,
      title,
      authorName: 'Team',
      status: 'published',
      publishedAt: sql`now()` as unknown as string,
      ...fields,
    });
  const entry = (slug: string, version: string, title: string, fields: Partial<typeof changelogEntries.$inferInsert> = {}) =>
    content.service.ctx.db.insert(changelogEntries).values({
      slug,
      version,
      title,
      status: 'published',
      publishedAt: sql`now()` as unknown as string,
      ...fields,
    });
  const item = async (fields: Record<string, unknown>) => {
    const response = await content.request('POST', '/roadmap', { auth: true, json: { ...actor, ...fields } });
    expect(response.status, response.text).toBe(201);
  };

  const search = async (query: string, options: { auth?: boolean } = {}) => {
    const response = await content.request('GET', `/search?${query}`, options);
    expect(response.status, response.text).toBe(200);
    return response.body.results as Record<'blog' | 'changelog' | 'roadmap', Result[]>;
  };
  const slugs = (results: Result[]) => results.map((result) => result.slug).sort();

  beforeAll(async () => {
    content = await startContent(engine);
    await post('progress-100', '100% done');
    await post('progress-1000', '1000 done');
    await post('snake-case', 'Naming in snake_case');
    await post('snake-x-case', 'Naming in snakeXcase');
    await post('windows-path', 'Paths like C:\\temp');
    await post('plain-path', 'Paths like C:temp');
    await post('quokka-in-description', 'Animals we like', { description: 'An article about the Quokka, the happiest animal' });
    await post('quokka-in-body', 'Body only', { content: 'Somewhere deep in the body a QUOKKA appears.' });
    await post('quokka-in-title', 'Quokka photography', { description: 'Pictures' });
    await post('quokka-draft', 'Quokka draft', { status: 'draft', publishedAt: null });
    await post('quokka-review', 'Quokka in review', { status: 'review', publishedAt: null });
    await entry('v1-0-0', 'v1.0.0', 'Release v1.0.0', { summary: 'Quokka support', content: 'Details' });
    await entry('v1-1-0', 'v1.1.0', 'Release v1.1.0', { summary: 'Quokka draft notes', status: 'draft', publishedAt: null });
    await item({ title: 'Quokka integration', summary: 'Bring quokkas to the API', description: 'Long text' });
    await item({ title: 'Secret quokka plan', public: false });
    for (let n = 0; n < 12; n++) {
      await post(`widget-post-${n}`, `Widget post ${n}`);
      await item({ title: `Widget item ${n}` });
    }
  });
  afterAll(() => content.close());

  it('finds published content by title, description or summary, and body, grouped by type', async () => {
    const results = await search('query=quokka');
    expect(slugs(results.blog)).toEqual(['quokka-in-body', 'quokka-in-description', 'quokka-in-title']);
    expect(results.changelog).toEqual([{ slug: 'v1-0-0', title: 'Release v1.0.0', description: 'Quokka support', type: 'changelog' }]);
    expect(results.roadmap).toEqual([
      { slug: 'quokka-integration', title: 'Quokka integration', description: 'Bring quokkas to the API', type: 'roadmap' },
    ]);
    expect(results.blog.find((result) => result.slug === 'quokka-in-description')).toEqual({
      slug: 'quokka-in-description',
      title: 'Animals we like',
      description: 'An article about the Quokka, the happiest animal',
      type: 'blog',
    });
  });

  it('matches case-insensitively', async () => {
    expect(await search('query=QuOkKa')).toEqual(await search('query=quokka'));
  });

  it('lists title matches first', async () => {
    const results = await search('query=quokka');
    expect(results.blog[0].slug).toBe('quokka-in-title');
  });

  it('matches % literally: "100%" finds "100% done", not "1000 done"', async () => {
    expect(slugs((await search(`query=${encodeURIComponent('100%')}`)).blog)).toEqual(['progress-100']);
    expect(slugs((await search(`query=${encodeURIComponent('%')}`)).blog)).toEqual(['progress-100']);
    expect(slugs((await search(`query=${encodeURIComponent('100')}`)).blog)).toEqual(['progress-100', 'progress-1000']);
  });

  it('matches _ literally: "snake_case" does not find "snakeXcase"', async () => {
    expect(slugs((await search('query=snake_case')).blog)).toEqual(['snake-case']);
    expect(slugs((await search('query=_')).blog)).toEqual(['snake-case']);
    expect(slugs((await search('query=case')).blog)).toEqual(['snake-case', 'snake-x-case']);
  });

  it('matches a backslash literally', async () => {
    expect(slugs((await search(`query=${encodeURIComponent('c:\\temp')}`)).blog)).toEqual(['windows-path']);
    expect(slugs((await search(`query=${encodeURIComponent('c:temp')}`)).blog)).toEqual(['plain-path']);
  });

  it('searches one type when asked, leaving the others empty', async () => {
    const results = await search('query=quokka&type=roadmap');
    expect(results.blog).toEqual([]);
    expect(results.changelog).toEqual([]);
    expect(slugs(results.roadmap)).toEqual(['quokka-integration']);
    expect((await search('query=quokka&type=changelog')).changelog).toHaveLength(1);
    expect((await search('query=quokka&type=blog')).roadmap).toEqual([]);
  });

  it('limits each type separately: 10 by default, up to 50', async () => {
    const byDefault = await search('query=widget');
    expect(byDefault.blog).toHaveLength(10);
    expect(byDefault.roadmap).toHaveLength(10);
    const three = await search('query=widget&limit=3');
    expect(three.blog).toHaveLength(3);
    expect(three.roadmap).toHaveLength(3);
    const fifty = await search('query=widget&limit=50');
    expect(fifty.blog).toHaveLength(12);
    expect(fifty.roadmap).toHaveLength(12);
  });

  it('finds nothing for text that is nowhere', async () => {
    expect(await search('query=platypus')).toEqual({ blog: [], changelog: [], roadmap: [] });
  });

  it('never shows drafts, posts in review or non-public items without preview, even to the secret', async () => {
    for (const auth of [false, true]) {
      const results = await search('query=quokka', { auth });
      const all = [...results.blog, ...results.changelog, ...results.roadmap].map((result) => result.slug);
      expect(all).not.toContain('quokka-draft');
      expect(all).not.toContain('quokka-review');
      expect(all).not.toContain('v1-1-0');
      expect(all).not.toContain('secret-quokka-plan');
    }
  });

  it('includes drafts and non-public items, with their status, in preview mode with the secret', async () => {
    const results = await search('query=quokka&preview=true', { auth: true });
    expect(results.blog.find((result) => result.slug === 'quokka-draft')).toMatchObject({ status: 'draft', type: 'blog' });
    expect(results.blog.find((result) => result.slug === 'quokka-review')).toMatchObject({ status: 'review' });
    expect(results.blog.find((result) => result.slug === 'quokka-in-title')).toMatchObject({ status: 'published' });
    expect(results.changelog.map((result) => result.slug).sort()).toEqual(['v1-0-0', 'v1-1-0']);
    expect(results.roadmap.find((result) => result.slug === 'secret-quokka-plan')).toMatchObject({ status: 'planned' });
  });

  it('refuses preview mode without the secret with 401', async () => {
    const response = await content.request('GET', '/search?query=quokka&preview=true');
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('unauthorized');
  });

  it('takes a query of 200 characters', async () => {
    expect(await search(`query=${'q'.repeat(200)}`)).toEqual({ blog: [], changelog: [], roadmap: [] });
  });

  it.each([
    ['no query', ''],
    ['an empty query', 'query='],
    ['a blank query', 'query=%20%20'],
    ['a query over 200 characters', `query=${'q'.repeat(201)}`],
    ['limit 0', 'query=a&limit=0'],
    ['limit 51', 'query=a&limit=51'],
    ['an unknown type', 'query=a&type=posts'],
    ['an unknown parameter', 'query=a&sort=title'],
  ])('refuses %s with 400', async (_case, query) => {
    const response = await content.request('GET', `/search?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
  });
});
