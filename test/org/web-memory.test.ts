/**
 * /memory and /memory/:id (DESIGN 4.6, issue 19 items 4 and 5): the search is search_memory's, over the
 * viewer's spaces only (all of them for an owner); an item's page shows every version with its provenance and
 * validity; another space's item is answered exactly as an unknown one.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordMemory } from '../../src/org/memory/write.js';
import { BEA, CY, startConsoleOrg, type ConsoleOrg } from '../helpers/console-org.js';
import { engines } from '../helpers/databases.js';
import { OWNER } from '../helpers/org.js';
import type { Browserless } from '../helpers/web-client.js';

describe.each(engines)('the memory pages on %s', (engine) => {
  let c: ConsoleOrg;
  let owner: Browserless;
  let bea: Browserless;
  let cy: Browserless;
  beforeAll(async () => {
    c = await startConsoleOrg(engine);
    [owner, bea, cy] = await Promise.all([c.signIn(OWNER), c.signIn(BEA), c.signIn(CY)]);
  });
  afterAll(async () => {
    await c?.close();
  });

  it('sends someone not signed in to sign in, and back', async () => {
    const answer = await fetch(`${c.org.url}/memory?q=zebra`, { redirect: 'manual' });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`/signin?return_to=${encodeURIComponent('/memory?q=zebra')}`);
  });

  it('lists the latest current items of every space to an owner, the replaced version left out', async () => {
    const page = await owner.get('/memory');
    expect(page.status).toBe(200);
    for (const id of [c.memory.currentVersion, c.memory.ops, c.memory.secret]) expect(page.text).toContain(`/memory/${id}`);
    expect(page.text).not.toContain(`/memory/${c.memory.firstVersion}"`);
    expect(page.text).toContain('Release train leaves on Wednesdays');
    expect(page.text).toContain('Hideaway');
    expect(page.text).toContain('release, process');
  });

  it('searches with search_memory’s engine: full text, and a partial word through its trigram fallback', async () => {
    const full = await owner.get('/memory?q=zebra');
    expect(full.text).toContain(`/memory/${c.memory.ops}`);
    expect(full.text).toContain(`/memory/${c.memory.secret}`);
    expect(full.text).not.toContain(`/memory/${c.memory.currentVersion}`);
    const partial = await owner.get('/memory?q=opswor');
    expect(partial.text).toContain(`/memory/${c.memory.ops}`);
    expect(partial.text).not.toContain(`/memory/${c.memory.secret}`);
  });

  it('filters by space and kind, an empty filter meaning none', async () => {
    const ops = await owner.get(`/memory?q=zebra&space=${c.spaces.ops}&kind=`);
    expect(ops.text).toContain(`/memory/${c.memory.ops}`);
    expect(ops.text).not.toContain(`/memory/${c.memory.secret}`);
    const facts = await owner.get('/memory?q=&space=&kind=fact');
    expect(facts.text).toContain(`/memory/${c.memory.secret}`);
    expect(facts.text).not.toContain(`/memory/${c.memory.ops}`);
  });

  it('shows a member nothing of a space they are not in: not in the list, not in a search that matches it', async () => {
    for (const path of ['/memory', '/memory?q=zebra', '/memory?q=opsworth', '/memory?q=restart+cluster', '/memory?kind=instruction']) {
      const page = await bea.get(path);
      expect(page.status, path).toBe(200);
      expect(page.text, path).not.toContain(c.memory.ops);
      expect(page.text, path).not.toContain('Opsworth');
      expect(page.text, path).not.toContain('Backroom');
    }
    expect((await bea.get('/memory?q=zebra')).text).toContain(`/memory/${c.memory.secret}`);
    const cyPage = await cy.get('/memory?q=zebra');
    expect(cyPage.text).toContain(`/memory/${c.memory.ops}`);
    for (const hidden of [c.memory.secret, c.memory.currentVersion, 'Hideaway', 'Release train']) expect(cyPage.text).not.toContain(hidden);
  });

  it('answers a space filter outside the member’s spaces as not found', async () => {
    const page = await bea.get(`/memory?q=zebra&space=${c.spaces.ops}`);
    expect(page.status).toBe(404);
    expect(page.text).not.toContain('Opsworth');
  });

  it('shows an item with every version, its provenance and its validity window', async () => {
    const page = await bea.get(`/memory/${c.memory.currentVersion}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Release train leaves on Wednesdays</h1>');
    expect(page.text).toContain('Versions (2)');
    expect(page.text).toContain('Version 1: <a href="/memory/' + c.memory.firstVersion + '">Release train leaves on Tuesdays</a>');
    expect(page.text).toContain('We release on Tuesday mornings.');
    expect(page.text).toContain('2026-02-28 23:00:00 UTC');
    expect(page.text).toContain('2036-02-29 23:00:00 UTC');
    expect(page.text).toContain('Owner <small>(person)</small>');
    expect(page.text).toMatch(/Through client<\/dt><dd>the client Owner laptop \(client id atr_cl_[^)<]+\)<\/dd>/);
    const old = await bea.get(`/memory/${c.memory.firstVersion}`);
    expect(old.text).toContain(`This version was replaced. The current version is <a href="/memory/${c.memory.currentVersion}">`);
  });

  it('names the agent and the person it worked for, and the operation, for an agent’s item', async () => {
    const db = c.org.service.ctx.db;
    const [row] = await c.org.service.database.rows<{ scribe: string; owner: string }>(
      sql`SELECT (SELECT id FROM agents WHERE key = 'scribe') AS scribe, (SELECT id FROM people WHERE email = ${OWNER.email}) AS owner`,
    );
    const item = await recordMemory(
      db,
      { kind: 'fact', title: 'Venue shortlist', body: 'Three venues in Lisbon.', space_id: c.spaces.general },
      { type: 'agent', agentId: row.scribe, onBehalfOfPersonId: row.owner, operationId: c.operation },
      { spaceIds: [c.spaces.general] },
      () => {},
    );
    const page = await owner.get(`/memory/${item.id}`);
    expect(page.text).toContain('Scribe <small>(agent)</small><small> for Owner</small>');
    expect(page.text).toContain(`<a href="/operations/${c.operation}">${c.operation}</a>`);
  });

  it('answers another space’s item exactly as an unknown one', async () => {
    const hidden = await bea.get(`/memory/${c.memory.ops}`);
    const unknown = await bea.get('/memory/mem_doesnotexist');
    expect(hidden.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(hidden.text).toBe(unknown.text);
    expect(hidden.text).not.toContain('Opsworth');
    expect((await owner.get(`/memory/${c.memory.ops}`)).status).toBe(200);
  });

  it('pages through more items than a page holds, each once', async () => {
    const db = c.org.service.ctx.db;
    const [person] = await c.org.service.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${BEA.email}`);
    for (let index = 0; index < 23; index++) {
      await recordMemory(
        db,
        { kind: 'fact', title: `Numbered note ${index}`, body: `Note number ${index} about paging.`, space_id: c.spaces.secret },
        { type: 'person', personId: person.id, clientId: null },
        { spaceIds: [c.spaces.secret] },
        () => {},
      );
    }
    const seen: string[] = [];
    let path: string | undefined = `/memory?space=${c.spaces.secret}`;
    for (let pages = 0; path && pages < 5; pages++) {
      const page = await owner.get(path);
      expect(page.status).toBe(200);
      seen.push(...[...page.text.matchAll(/href="\/memory\/(mem_[^"]+)"/g)].map((match) => match[1]));
      const next = /<a href="([^"]+)">Next page<\/a>/.exec(page.text)?.[1];
      path = next?.replaceAll('&amp;', '&');
    }
    expect(seen.length).toBe(24);
    expect(new Set(seen).size).toBe(24);

    // A search pages the same way, with search_memory's own cursor.
    const found: string[] = [];
    path = '/memory?q=paging';
    for (let pages = 0; path && pages < 5; pages++) {
      const page = await bea.get(path);
      expect(page.status).toBe(200);
      found.push(...[...page.text.matchAll(/href="\/memory\/(mem_[^"]+)"/g)].map((match) => match[1]));
      path = /<a href="([^"]+)">Next page<\/a>/.exec(page.text)?.[1]?.replaceAll('&amp;', '&');
    }
    expect(found.length).toBe(23);
    expect(new Set(found).size).toBe(23);
  });

  it('refuses a bad query string with 400', async () => {
    expect((await owner.get('/memory?kind=rumour')).status).toBe(400);
    expect((await owner.get('/memory?cursor=nonsense')).status).toBe(400);
  });
});
