/**
 * Vote stuffing from one address (CONTENT_VOTES_PER_MINUTE): distinct voter_ids do not dodge the limit, a
 * forged X-Forwarded-For does not either unless TRUST_PROXY names the proxy, and the limit is configurable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_VOTES_PER_MINUTE } from '../../src/content/vote-limit.js';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

describe.each(engines)('votes per address on %s', (engine) => {
  let direct: TestContent;
  let proxied: TestContent;
  let small: TestContent;
  beforeAll(async () => {
    [direct, proxied, small] = await Promise.all([
      startContent(engine, { config: { votesPerMinute: undefined } }),
      startContent(engine, { config: { votesPerMinute: undefined, trustProxy: 'true' } }),
      startContent(engine, { config: { votesPerMinute: 3 } }),
    ]);
  });
  afterAll(() => Promise.all([direct.close(), proxied.close(), small.close()]));

  const createItem = async (content: TestContent, title: string) => {
    const response = await content.request('POST', '/roadmap', { auth: true, json: { ...actor, title } });
    expect(response.status, response.text).toBe(201);
    return response.body.slug as string;
  };
  const vote = (content: TestContent, slug: string, voter: string, headers: Record<string, string> = {}) =>
    content.request('POST', `/roadmap/${slug}/vote`, { json: { voter_id: voter }, headers });
  const votesOf = async (content: TestContent, slug: string) => (await content.request('GET', `/roadmap/${slug}`)).body.votes as number;

  it('stops many distinct voter_ids from one address at the limit with 429 rate_limited and Retry-After', async () => {
    const slug = await createItem(direct, 'Stuffed ballot');
    const statuses: number[] = [];
    for (let n = 0; n < DEFAULT_VOTES_PER_MINUTE + 10; n++) statuses.push((await vote(direct, slug, `sock-puppet-${n}`)).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(DEFAULT_VOTES_PER_MINUTE);
    const refused = await vote(direct, slug, 'one-more');
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(await votesOf(direct, slug)).toBe(DEFAULT_VOTES_PER_MINUTE);
    // Withdrawing other people's votes is counted against the same limit.
    const withdraw = await direct.request('DELETE', `/roadmap/${slug}/vote`, { json: { voter_id: 'sock-puppet-0' } });
    expect(withdraw.status).toBe(429);
    expect(await votesOf(direct, slug)).toBe(DEFAULT_VOTES_PER_MINUTE);
  });

  it('is not dodged with a forged X-Forwarded-For when no proxy is trusted', async () => {
    const slug = await createItem(small, 'Forged addresses');
    const statuses: number[] = [];
    for (let n = 0; n < 6; n++) statuses.push((await vote(small, slug, `forged-${n}`, { 'x-forwarded-for': `198.51.100.${n}` })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    expect(await votesOf(small, slug)).toBe(3);
  });

  it('counts each client address on its own behind a trusted proxy', async () => {
    const slug = await createItem(proxied, 'Behind a proxy');
    for (let n = 0; n < DEFAULT_VOTES_PER_MINUTE; n++) expect((await vote(proxied, slug, `a-${n}`, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(200);
    expect((await vote(proxied, slug, 'a-last', { 'x-forwarded-for': '198.51.100.7' })).status).toBe(429);
    expect((await vote(proxied, slug, 'b-0', { 'x-forwarded-for': '198.51.100.8' })).status).toBe(200);
    expect(await votesOf(proxied, slug)).toBe(DEFAULT_VOTES_PER_MINUTE + 1);
  });
});
