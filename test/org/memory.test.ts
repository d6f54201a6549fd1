/**
 * Company memory end to end (DESIGN 4.3): record_memory, search_memory and get_memory through OAuth-issued
 * tokens and the MCP SDK client — provenance, supersession and history, as_of and validity windows, tags,
 * kinds and spaces, ranked full-text search with its trigram fallback, cursors, visibility, idempotency and
 * refusals that write nothing.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER } from '../helpers/org.js';
import { BEA, memoryFingerprint, NOMAD, startMemoryOrg, type MemoryOrg } from '../helpers/memory-fixture.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { recordMemory } from '../../src/org/memory/write.js';
import { searchMemory } from '../../src/org/memory/search.js';
import { cachedOrgRead } from '../../src/org/read-cache.js';

describe.each(engines)('company memory on %s', (engine) => {
  let m: MemoryOrg;
  let owner: OrgMcp;
  let bea: OrgMcp;
  let spaces: MemoryOrg['spaces'];
  beforeAll(async () => {
    m = await startMemoryOrg(engine);
    spaces = m.spaces;
    owner = await connectOrgMcp(m.org, { clientName: 'Owner laptop' });
    bea = await connectOrgMcp(m.org, { email: BEA.email, password: BEA.password });
  });
  afterAll(async () => {
    await owner?.close();
    await bea?.close();
    await m?.close();
  });

  const record = (client: OrgMcp, args: Record<string, unknown>) =>
    client.callOk('record_memory', { kind: 'fact', space_id: spaces.general, ...args });
  const search = (client: OrgMcp, args: Record<string, unknown>) => client.callOk('search_memory', args);
  const ids = (page: { items: Array<{ id: string }> }) => page.items.map((item) => item.id);

  /** A call refused with `code` (and naming `field` when given) that changes nothing stored. */
  async function expectRefused(client: OrgMcp, tool: string, args: Record<string, unknown>, code: string, field?: string) {
    const before = await memoryFingerprint(m.org);
    const error = await client.callError(tool, args);
    expect(error.code).toBe(code);
    if (field) expect(error.details.issues.map((issue: { field: string }) => issue.field)).toContain(field);
    expect(await memoryFingerprint(m.org)).toBe(before);
    return error;
  }

  describe('record_memory', () => {
    it('records an item with the person and client as provenance', async () => {
      const [person] = await m.org.service.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${OWNER.email}`);
      const before = Date.now();
      const item = await record(owner, {
        kind: 'decision',
        title: 'We deploy on Tuesdays',
        body: 'Releases go out on Tuesday mornings, never on Fridays.',
        tags: ['Release', 'process', 'release '],
      });
      expect(item).toEqual({
        id: expect.stringMatching(/^mem_/),
        kind: 'decision',
        title: 'We deploy on Tuesdays',
        body: 'Releases go out on Tuesday mornings, never on Fridays.',
        tags: ['release', 'process'],
        space_id: spaces.general,
        status: 'current',
        provenance: {
          recorded_by: { type: 'person', id: person.id, name: 'Owner' },
          client_id: owner.connected.clientId,
          recorded_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
        },
      });
      expect(Date.parse(item.provenance.recorded_at)).toBeGreaterThanOrEqual(before - 1000);
      expect(await owner.callOk('get_memory', { memory_id: item.id })).toEqual({ ...item, history: [item] });
    });

    it('records for an agent working an operation on a person’s behalf (the agent API’s path)', async () => {
      const db = m.org.service.ctx.db;
      const [assistant] = await m.org.service.database.rows<{ id: string; name: string }>(sql`SELECT id, name FROM agents WHERE key = 'assistant'`);
      const [person] = await m.org.service.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${OWNER.email}`);
      const item = await recordMemory(
        db,
        { kind: 'fact', title: 'Agent note', body: 'Written by an agent during its work', space_id: spaces.ops },
        { type: 'agent', agentId: assistant.id, onBehalfOfPersonId: person.id, operationId: 'op_test' },
        { spaceIds: [spaces.ops] },
        () => {},
      );
      const read = await owner.callOk('get_memory', { memory_id: item.id });
      expect(read.provenance).toEqual({
        recorded_by: { type: 'agent', id: assistant.id, name: assistant.name },
        on_behalf_of: { person_id: person.id },
        operation_id: 'op_test',
        recorded_at: item.provenance.recorded_at,
      });
    });

    it('refuses bad arguments naming them, writing nothing', async () => {
      const good = { kind: 'fact', title: 't', body: 'b', space_id: spaces.general };
      await expectRefused(owner, 'record_memory', { ...good, kind: 'rumour' }, 'invalid_request', 'kind');
      await expectRefused(owner, 'record_memory', { ...good, title: '   ' }, 'invalid_request', 'title');
      await expectRefused(owner, 'record_memory', { ...good, body: 'x'.repeat(20_001) }, 'invalid_request', 'body');
      await expectRefused(owner, 'record_memory', { ...good, tags: ['x'.repeat(41)] }, 'invalid_request', 'tags.0');
      await expectRefused(owner, 'record_memory', { ...good, valid_from: 'next tuesday' }, 'invalid_request', 'valid_from');
      // Spec 4.2 rule 3: no zone is assumed, so an instant without its offset is refused.
      await expectRefused(owner, 'record_memory', { ...good, valid_until: '2030-01-01T00:00:00' }, 'invalid_request', 'valid_until');
      await expectRefused(
        owner,
        'record_memory',
        { ...good, valid_from: '2030-01-02T00:00:00Z', valid_until: '2030-01-01T00:00:00Z', idempotency_key: 'bad-window' },
        'invalid_request',
        'valid_until',
      );
      await expectRefused(owner, 'record_memory', { ...good, colour: 'blue' }, 'invalid_request', 'colour');
      await expectRefused(owner, 'record_memory', { kind: 'fact', title: 't', body: 'b' }, 'invalid_request', 'space_id');
    });

    it('refuses a space the person is not in as not_found, writing nothing', async () => {
      await expectRefused(owner, 'record_memory', { kind: 'fact', title: 't', body: 'b', space_id: spaces.secret }, 'not_found');
      await expectRefused(owner, 'record_memory', { kind: 'fact', title: 't', body: 'b', space_id: 'spc_nope' }, 'not_found');
    });
  });

  describe('idempotency', () => {
    it('the same key and arguments return the same item, stored once', async () => {
      const args = { title: 'Idempotent fact', body: 'Recorded once only', idempotency_key: 'key-same' };
      const first = await record(owner, args);
      const again = await record(owner, args);
      expect(again).toEqual(first);
      const [{ count }] = await m.org.service.database.rows<{ count: number }>(sql`SELECT count(*)::int AS count FROM memory_items WHERE title = 'Idempotent fact'`);
      expect(count).toBe(1);
    });

    it('the same key with other arguments is idempotency_conflict, writing nothing', async () => {
      await record(owner, { title: 'Conflict fact', body: 'first', idempotency_key: 'key-conflict' });
      await expectRefused(owner, 'record_memory', { kind: 'fact', space_id: spaces.general, title: 'Conflict fact', body: 'second', idempotency_key: 'key-conflict' }, 'idempotency_conflict');
    });

    it('racing retries with one key store one item and all answer it', async () => {
      const args = { title: 'Raced fact', body: 'Sent five times at once', idempotency_key: 'key-race' };
      const answers = await Promise.all(Array.from({ length: 5 }, () => record(owner, args)));
      expect(new Set(answers.map((answer) => answer.id)).size).toBe(1);
      const [{ count }] = await m.org.service.database.rows<{ count: number }>(sql`SELECT count(*)::int AS count FROM memory_items WHERE title = 'Raced fact'`);
      expect(count).toBe(1);
    });
  });

  describe('supersedes and history', () => {
    it('keeps every version, newest first, and searches only the current one', async () => {
      const v1 = await record(owner, { title: 'Office wifi', body: 'The wifi password is lighthouse', tags: ['wifi'] });
      const v2 = await record(owner, { title: 'Office wifi', body: 'The wifi password is harbour', tags: ['wifi'], supersedes: v1.id });
      expect(v2).toMatchObject({ status: 'current', supersedes: v1.id });
      const v3 = await record(owner, { title: 'Office wifi', body: 'The wifi password is seagull', tags: ['wifi'], supersedes: v2.id });

      const read = await owner.callOk('get_memory', { memory_id: v1.id });
      expect(read).toMatchObject({ id: v1.id, status: 'superseded', superseded_by: v2.id, superseded_at: v2.provenance.recorded_at });
      expect(read.history.map((item: { id: string }) => item.id)).toEqual([v3.id, v2.id, v1.id]);
      expect((await owner.callOk('get_memory', { memory_id: v3.id })).history).toEqual(read.history);

      expect(ids(await search(owner, { query: 'wifi password' }))).toEqual([v3.id]);
      const all = await search(owner, { query: 'wifi password', include_superseded: true });
      expect(ids(all).sort()).toEqual([v1.id, v2.id, v3.id].sort());

      // as_of: what was current at each version's recording.
      expect(ids(await search(owner, { query: 'wifi password', as_of: v1.provenance.recorded_at }))).toEqual([v1.id]);
      expect(ids(await search(owner, { query: 'wifi password', as_of: v2.provenance.recorded_at }))).toEqual([v2.id]);
      const beforeAll = new Date(Date.parse(v1.provenance.recorded_at) - 1000).toISOString();
      expect(ids(await search(owner, { query: 'wifi password', as_of: beforeAll }))).toEqual([]);

      // A superseded version cannot be superseded again.
      const error = await expectRefused(owner, 'record_memory', { kind: 'fact', space_id: spaces.general, title: 'x', body: 'y', supersedes: v1.id }, 'invalid_state');
      expect(error.message).toContain(v2.id);
    });

    it('two versions racing to supersede one item: exactly one wins', async () => {
      const base = await record(owner, { title: 'Raced version', body: 'original' });
      const results = await Promise.all(
        [1, 2, 3].map((n) =>
          owner.client.callTool({ name: 'record_memory', arguments: { kind: 'fact', space_id: spaces.general, title: 'Raced version', body: `v${n}`, supersedes: base.id } }),
        ),
      );
      const errors = results.filter((result) => result.isError).map((result) => JSON.parse((result.content as Array<{ text: string }>)[0].text).error.code);
      expect(errors).toEqual(['invalid_state', 'invalid_state']);
      const history = (await owner.callOk('get_memory', { memory_id: base.id })).history;
      expect(history).toHaveLength(2);
    });

    it('refuses to supersede across spaces (invalid_request), or an item the person cannot see (not_found)', async () => {
      const inOps = await record(owner, { space_id: spaces.ops, title: 'Ops fact', body: 'lives in ops' });
      await expectRefused(owner, 'record_memory', { kind: 'fact', space_id: spaces.general, title: 'x', body: 'y', supersedes: inOps.id }, 'invalid_request', 'supersedes');
      const secret = await record(bea, { space_id: spaces.secret, title: 'Secret fact', body: 'only Bea sees it' });
      const refused = await expectRefused(owner, 'record_memory', { kind: 'fact', space_id: spaces.general, title: 'x', body: 'y', supersedes: secret.id }, 'not_found');
      const unknown = await expectRefused(owner, 'record_memory', { kind: 'fact', space_id: spaces.general, title: 'x', body: 'y', supersedes: 'mem_unknown' }, 'not_found');
      // Indistinguishable: no leak of whether the id exists.
      expect(refused).toEqual(unknown);
    });
  });

  describe('validity windows', () => {
    it('shows an item only while it is valid, at as_of (default now)', async () => {
      const expired = await record(owner, { title: 'Winter parking', body: 'Parking zeppelin rules', valid_from: '2020-01-01T00:00:00Z', valid_until: '2020-03-01T00:00:00+01:00' });
      const future = await record(owner, { title: 'Future parking', body: 'Parking zeppelin garage', valid_from: '2999-01-01T00:00:00Z' });
      const always = await record(owner, { title: 'Parking', body: 'Parking zeppelin lot' });
      expect(expired).toMatchObject({ valid_from: '2020-01-01T00:00:00.000000Z', valid_until: '2020-02-29T23:00:00.000000Z' });

      expect(ids(await search(owner, { query: 'zeppelin' }))).toEqual([always.id]);
      // as_of shows what memory held then: in 2020 none of these had been recorded yet, though the winter rule was valid.
      expect(ids(await search(owner, { query: 'zeppelin', as_of: '2020-02-01T00:00:00Z' }))).toEqual([]);
      const soon = new Date(Date.now() + 60_000).toISOString();
      expect(ids(await search(owner, { query: 'zeppelin', as_of: soon }))).toEqual([always.id]);
      expect(ids(await search(owner, { query: 'zeppelin', as_of: '2999-06-01T00:00:00Z' })).sort()).toEqual([future.id, always.id].sort());
    });

    it('as_of within a window shows the item once it was recorded', async () => {
      const now = Date.now();
      const windowed = await record(owner, {
        title: 'Maintenance window',
        body: 'The quokka cluster is read-only',
        valid_from: new Date(now - 3_600_000).toISOString(),
        valid_until: new Date(now + 3_600_000).toISOString(),
      });
      expect(ids(await search(owner, { query: 'quokka' }))).toEqual([windowed.id]);
      expect(ids(await search(owner, { query: 'quokka', as_of: new Date(now + 7_200_000).toISOString() }))).toEqual([]);
      expect(ids(await search(owner, { query: 'quokka', as_of: new Date(now + 1_800_000).toISOString() }))).toEqual([windowed.id]);
    });
  });

  describe('search_memory', () => {
    it('ranks a title match above a body match, and stems words', async () => {
      const inBody = await record(owner, { title: 'Weekly sync', body: 'We talked about the invoicing backlog' });
      const inTitle = await record(owner, { title: 'Invoicing runs monthly', body: 'On the first of each month' });
      expect(ids(await search(owner, { query: 'invoices' }))).toEqual([inTitle.id, inBody.id]);
      // Web-search syntax: an excluded word.
      expect(ids(await search(owner, { query: 'invoicing -backlog' }))).toEqual([inTitle.id]);
    });

    it('filters by kind, tags and space, and only ever searches the person’s spaces', async () => {
      const fact = await record(owner, { kind: 'fact', title: 'Narwhal fact', body: 'narwhal', tags: ['sea', 'animal'] });
      const instruction = await record(owner, { kind: 'instruction', title: 'Narwhal rule', body: 'narwhal', tags: ['sea'] });
      const inOps = await record(owner, { space_id: spaces.ops, title: 'Narwhal ops', body: 'narwhal' });
      const secret = await record(bea, { space_id: spaces.secret, title: 'Narwhal secret', body: 'narwhal' });
      const beaGeneral = await record(bea, { title: 'Narwhal from Bea', body: 'narwhal' });

      expect(ids(await search(owner, { query: 'narwhal' })).sort()).toEqual([fact.id, instruction.id, inOps.id, beaGeneral.id].sort());
      expect(ids(await search(owner, { query: 'narwhal', kind: 'instruction' }))).toEqual([instruction.id]);
      expect(ids(await search(owner, { query: 'narwhal', tags: ['Sea', 'animal'] }))).toEqual([fact.id]);
      expect(ids(await search(owner, { query: 'narwhal', space_id: spaces.ops }))).toEqual([inOps.id]);
      expect(ids(await search(bea, { query: 'narwhal' })).sort()).toEqual([fact.id, instruction.id, secret.id, beaGeneral.id].sort());

      expect((await owner.callError('search_memory', { query: 'narwhal', space_id: spaces.secret })).code).toBe('not_found');
      expect((await owner.callError('get_memory', { memory_id: secret.id })).code).toBe('not_found');
      expect(await owner.callError('get_memory', { memory_id: secret.id })).toEqual(await owner.callError('get_memory', { memory_id: 'mem_nothing' }));
    });

    it('falls back to trigrams for partial and short words, newest first', async () => {
      const kube = await record(owner, { title: 'Kubernetes upgrade', body: 'The cluster moves to a newer Kubernetes release' });
      const mongo = await record(owner, { title: 'Session store', body: 'Sessions live in MongoDB' });
      expect(ids(await search(owner, { query: 'kube' }))).toEqual([kube.id]);
      expect(ids(await search(owner, { query: 'godb' }))).toEqual([mongo.id]);
      expect(ids(await search(owner, { query: 'db' }))).toEqual([mongo.id]);
      const kubeSessions = await record(owner, { title: 'Kubernetes sessions', body: 'Session affinity on the cluster' });
      expect(ids(await search(owner, { query: 'kube sess' }))).toEqual([kubeSessions.id]);
      expect(ids(await search(owner, { query: 'kube' }))).toEqual([kubeSessions.id, kube.id]);
      expect(ids(await search(owner, { query: 'xylophonic' }))).toEqual([]);
      // Only stop words: nothing to look for.
      expect(ids(await search(owner, { query: 'the of and' }))).toEqual([]);
    });

    it('pages with cursors without skipping or repeating, also when ranks tie and items arrive meanwhile', async () => {
      const recorded: string[] = [];
      for (let i = 0; i < 7; i++) recorded.push((await record(owner, { title: 'Pangolin note', body: 'pangolin pangolin' })).id);
      // Different ranks too: a body-only match.
      recorded.push((await record(owner, { title: 'Other', body: 'one pangolin' })).id);

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: { items: Array<{ id: string }>; next_cursor: string | null } = await search(owner, { query: 'pangolin', limit: 3, ...(cursor ? { cursor } : {}) });
        seen.push(...ids(page));
        cursor = page.next_cursor;
        pages += 1;
        // Recorded while paging: ranked first, so it belongs before the cursor and never shows up later.
        if (pages === 1) await record(owner, { title: 'Pangolin pangolin', body: 'pangolin pangolin pangolin' });
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toHaveLength(8);
      expect(new Set(seen).size).toBe(8);
      expect([...seen].sort()).toEqual([...recorded].sort());
      // Ties are ordered newest first.
      expect(seen.slice(0, 7)).toEqual(recorded.slice(0, 7).reverse());
    });

    it('ranks the newest items first when there are more than the first tier holds, then the older ones, across pages', async () => {
      const db = m.org.service.ctx.db;
      const caller = { spaceIds: [spaces.general] };
      // Oldest first: a strong match, then weak ones; with a first tier of the newest 3 items the strong old one
      // comes after the newest weak ones.
      const strong = await record(owner, { title: 'Okapi okapi', body: 'okapi okapi okapi' });
      const weak: string[] = [];
      for (let i = 0; i < 3; i++) weak.push((await record(owner, { title: `Note ${i}`, body: 'one okapi' })).id);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await searchMemory(db, { query: 'okapi', limit: 2, ...(cursor ? { cursor } : {}) }, caller, { recentWindow: 3 });
        seen.push(...ids(page));
        cursor = page.next_cursor ?? undefined;
        if (seen.length === 2) await record(owner, { title: 'Okapi okapi okapi', body: 'okapi' });
      } while (cursor);
      expect(seen).toEqual([...weak.reverse(), strong.id]);
      // Without tiers (the default window holds every item here) the strong match ranks first.
      expect(ids(await searchMemory(db, { query: 'okapi', limit: 10 }, caller)).slice(0, 2)).not.toContain(weak[0]);
    });

    it('shares the first tier’s boundary between searches until memory changes', async () => {
      const { ctx } = m.org.service;
      const caller = { spaceIds: [spaces.general] };
      let reads = 0;
      const cacheBoundary = (key: Record<string, unknown>, read: () => Promise<string | null>) =>
        cachedOrgRead(ctx, ctx.db, 'memory', 'searchBoundary', key, () => ((reads += 1), read()));
      const find = (query: string) => searchMemory(ctx.db, { query, limit: 1 }, caller, { recentWindow: 2, cacheBoundary });
      const boundaryOf = (page: { next_cursor: string | null }) => JSON.parse(Buffer.from(page.next_cursor!, 'base64url').toString())[1];
      const recorded: string[] = [];
      for (let i = 0; i < 3; i++) recorded.push((await record(owner, { title: `Quokka ${i}`, body: 'quokka colony' })).provenance.recorded_at);
      const first = await find('quokka');
      await find('colony');
      expect(reads).toBe(1);
      // The second newest item of the space bounds the first tier of both searches.
      expect(boundaryOf(first)).toBe(recorded[1]);
      // A write drops it in this process before its answer: the next search reads it again, one item later.
      recorded.push((await record(owner, { title: 'Quokka 3', body: 'quokka colony' })).provenance.recorded_at);
      expect(boundaryOf(await find('quokka'))).toBe(recorded[2]);
      expect(reads).toBe(2);
    });

    it('pages the trigram fallback the same way', async () => {
      const recorded: string[] = [];
      for (let i = 0; i < 5; i++) recorded.push((await record(owner, { title: `Capybaraville ${i}`, body: 'settlement' })).id);
      const first = await search(owner, { query: 'capybarav', limit: 2 });
      const second = await search(owner, { query: 'capybarav', limit: 2, cursor: first.next_cursor });
      const third = await search(owner, { query: 'capybarav', limit: 2, cursor: second.next_cursor });
      expect(third.next_cursor).toBeNull();
      const seen = [...ids(first), ...ids(second), ...ids(third)];
      expect(seen.sort()).toEqual([...recorded].sort());
    });

    it('finds fragments in both tiers, newest first, across pages, every word or any', async () => {
      const db = m.org.service.ctx.db;
      const caller = { spaceIds: [spaces.general] };
      // Oldest first; with a first tier of the newest 3 items, two matches are in it and two are older.
      const both = await record(owner, { title: 'Wombatology notes', body: 'burrowing habits' });
      const older = await record(owner, { title: 'Wombatology', body: 'diet' });
      const recent = await record(owner, { title: 'Wombatology again', body: 'burrowing depth' });
      await record(owner, { title: 'Unrelated', body: 'nothing here' });
      const newest = await record(owner, { title: 'Burrowing', body: 'wombatology of burrowing' });
      const pages = async (query: string, match?: 'all' | 'any') => {
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await searchMemory(db, { query, limit: 1, ...(cursor ? { cursor } : {}) }, caller, { recentWindow: 3, ...(match && { match }) });
          seen.push(...ids(page));
          cursor = page.next_cursor ?? undefined;
        } while (cursor);
        return seen;
      };
      expect(await pages('wombatol')).toEqual([newest.id, recent.id, older.id, both.id]);
      expect(await pages('wombatol burrowi')).toEqual([newest.id, recent.id, both.id]);
      expect(await pages('zebratol burrowi', 'any')).toEqual([newest.id, recent.id, both.id]);
    });

    it('refuses bad arguments naming them, and a cursor of another search', async () => {
      await expectRefused(owner, 'search_memory', { query: '' }, 'invalid_request', 'query');
      await expectRefused(owner, 'search_memory', { query: 'x', limit: 0 }, 'invalid_request', 'limit');
      await expectRefused(owner, 'search_memory', { query: 'x', limit: 51 }, 'invalid_request', 'limit');
      await expectRefused(owner, 'search_memory', { query: 'x', kind: 'gossip' }, 'invalid_request', 'kind');
      await expectRefused(owner, 'search_memory', { query: 'x', as_of: 'yesterday' }, 'invalid_request', 'as_of');
      await expectRefused(owner, 'search_memory', { query: 'x', cursor: 'not-a-cursor' }, 'invalid_request', 'cursor');
      for (let i = 0; i < 2; i++) await record(owner, { title: 'Axolotl', body: 'axolotl' });
      const page = await search(owner, { query: 'axolotl', limit: 1 });
      expect(page.next_cursor).toEqual(expect.any(String));
      await expectRefused(owner, 'search_memory', { query: 'narwhal', limit: 1, cursor: page.next_cursor }, 'invalid_request', 'cursor');
      await expectRefused(owner, 'get_memory', {}, 'invalid_request', 'memory_id');
    });
  });

  describe('a person in no space', () => {
    it('is refused with no_space by every memory tool, writing nothing', async () => {
      const nomad = await connectOrgMcp(m.org, { email: NOMAD.email, password: NOMAD.password });
      try {
        const error = await expectRefused(nomad, 'record_memory', { kind: 'fact', title: 't', body: 'b', space_id: spaces.general }, 'no_space');
        expect(error.message).toMatch(/stop/);
        await expectRefused(nomad, 'search_memory', { query: 'anything' }, 'no_space');
        await expectRefused(nomad, 'get_memory', { memory_id: 'mem_x' }, 'no_space');
      } finally {
        await nomad.close();
      }
    });
  });

  it('lists the three tools with their output schemas and hints', async () => {
    const { tools } = await owner.client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.record_memory.annotations).toMatchObject({ readOnlyHint: false });
    expect(byName.search_memory.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get_memory.outputSchema?.properties).toHaveProperty('history');
    expect(byName.record_memory.inputSchema.properties).toHaveProperty('idempotency_key');
    expect(byName.search_memory.outputSchema?.properties).toHaveProperty('next_cursor');
  });
});
