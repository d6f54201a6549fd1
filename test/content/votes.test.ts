import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

describe.each(engines)('roadmap votes on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    content = await startContent(engine);
  });
  afterAll(() => content.close());

  const create = async (fields: Record<string, unknown>) => {
    const response = await content.request('POST', '/roadmap', { auth: true, json: { ...actor, ...fields } });
    expect(response.status, response.text).toBe(201);
    return response.body.slug as string;
  };
  const vote = (slug: string, voter_id: unknown) => content.request('POST', `/roadmap/${slug}/vote`, { json: { voter_id } });
  const unvote = (slug: string, voter_id: unknown) => content.request('DELETE', `/roadmap/${slug}/vote`, { json: { voter_id } });
  const votesOf = async (slug: string) => (await content.request('GET', `/roadmap/${slug}`, { auth: true })).body.votes as number;
  const voteRows = async (slug: string) =>
    (
      await content.service.ctx.database.rows<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM roadmap_votes v JOIN roadmap_items i ON i.id = v.item_id WHERE i.slug = ${slug}`,
      )
    )[0].n;

  it('counts a vote without the secret and answers { votes, voted: true }', async () => {
    const slug = await create({ title: 'First vote' });
    const response = await vote(slug, 'alice');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ votes: 1, voted: true });
    expect((await vote(slug, 'bob')).body).toEqual({ votes: 2, voted: true });
    expect(await votesOf(slug)).toBe(2);
  });

  it('ignores a repeated vote by the same voter', async () => {
    const slug = await create({ title: 'Repeated vote' });
    await vote(slug, 'carol');
    const again = await vote(slug, 'carol');
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ votes: 1, voted: true });
    expect(await voteRows(slug)).toBe(1);
  });

  it('withdraws a vote, answering { votes, voted: false }; withdrawing again changes nothing', async () => {
    const slug = await create({ title: 'Withdrawn vote' });
    await vote(slug, 'dave');
    await vote(slug, 'erin');
    const withdrawn = await unvote(slug, 'dave');
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body).toEqual({ votes: 1, voted: false });
    expect((await unvote(slug, 'dave')).body).toEqual({ votes: 1, voted: false });
    expect((await unvote(slug, 'never-voted')).body).toEqual({ votes: 1, voted: false });
    expect(await votesOf(slug)).toBe(1);
    expect((await vote(slug, 'dave')).body).toEqual({ votes: 2, voted: true });
  });

  it('keeps one vote per voter per item, not per voter', async () => {
    const a = await create({ title: 'Item A' });
    const b = await create({ title: 'Item B' });
    await vote(a, 'frank');
    expect((await vote(b, 'frank')).body).toEqual({ votes: 1, voted: true });
  });

  it('answers 404 for an unknown item and for a non-public one, and counts nothing', async () => {
    const hidden = await create({ title: 'Hidden from voters', public: false });
    for (const slug of ['no-such-item', hidden]) {
      for (const response of [await vote(slug, 'gina'), await unvote(slug, 'gina')]) {
        expect(response.status).toBe(404);
        expect(response.body.error.code).toBe('not_found');
      }
    }
    expect(await votesOf(hidden)).toBe(0);
    expect(await voteRows(hidden)).toBe(0);
  });

  it.each([
    ['no voter_id', undefined],
    ['an empty voter_id', ''],
    ['a voter_id over 200 characters', 'v'.repeat(201)],
    ['a numeric voter_id', 42],
  ])('refuses %s with 400 and counts nothing', async (_case, voterId) => {
    const slug = await create({ title: 'Bad voter' });
    for (const response of [await vote(slug, voterId), await unvote(slug, voterId)]) {
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    }
    expect(await votesOf(slug)).toBe(0);
  });

  it('takes a voter_id of 200 characters', async () => {
    const slug = await create({ title: 'Long voter' });
    expect((await vote(slug, 'v'.repeat(200))).body).toEqual({ votes: 1, voted: true });
  });

  it('refuses unknown body fields with 400', async () => {
    const slug = await create({ title: 'Extra fields' });
    const response = await content.request('POST', `/roadmap/${slug}/vote`, { json: { voter_id: 'hal', weight: 10 } });
    expect(response.status).toBe(400);
    expect(await votesOf(slug)).toBe(0);
  });

  it('counts exactly 200 from 200 concurrent voters plus 200 concurrent duplicates, and back to 0', async () => {
    const slug = await create({ title: 'Crowd favourite' });
    const voters = Array.from({ length: 200 }, (_, n) => `crowd-${n}`);
    const votes = await Promise.all([...voters, ...voters].map((voter) => vote(slug, voter)));
    const answer = (response: { status: number; body: unknown }) => ({ status: response.status, body: response.body });
    expect(votes.filter((response) => !(response.status === 200 && response.body.voted === true)).map(answer)).toEqual([]);
    expect(Math.max(...votes.map((response) => response.body.votes))).toBe(200);
    expect(await votesOf(slug)).toBe(200);
    expect(await voteRows(slug)).toBe(200);

    const withdrawals = await Promise.all([...voters, ...voters].map((voter) => unvote(slug, voter)));
    expect(withdrawals.filter((response) => !(response.status === 200 && response.body.voted === false)).map(answer)).toEqual([]);
    expect(Math.min(...withdrawals.map((response) => response.body.votes))).toBe(0);
    expect(await votesOf(slug)).toBe(0);
    expect(await voteRows(slug)).toBe(0);
  }, 120_000);

  it('does not log votes in the activity log (they have no actor) nor touch updated_at', async () => {
    const slug = await create({ title: 'Quiet votes' });
    const before = (await content.request('GET', `/roadmap/${slug}`)).body;
    await vote(slug, 'ivan');
    await unvote(slug, 'ivan');
    await vote(slug, 'judy');
    const log = await content.request('GET', `/activity?resource=roadmap&resource_id=${slug}`, { auth: true });
    expect(log.body.entries.map((entry: { action: string }) => entry.action)).toEqual(['created']);
    expect((await content.request('GET', `/roadmap/${slug}`)).body.updated_at).toBe(before.updated_at);
  });

  it('shows a fresh count to anonymous readers right after a vote', async () => {
    const slug = await create({ title: 'Cached count' });
    expect((await content.request('GET', `/roadmap/${slug}`)).body.votes).toBe(0);
    await vote(slug, 'kim');
    expect((await content.request('GET', `/roadmap/${slug}`)).body.votes).toBe(1);
  });
});
