/**
 * /memory/new and /memory/:id/new-version: a person records memory from the console through record_memory's own
 * domain function and input rules, as its provenance with no client, only in their own spaces; a change is a new
 * version; a refused form writes nothing and keeps what the person typed.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEA, CY, DEE, startConsoleOrg, type ConsoleOrg } from '../helpers/console-org.js';
import { engines } from '../helpers/databases.js';
import { OWNER } from '../helpers/org.js';
import { connectOrgMcp } from '../helpers/org-mcp.js';
import { checkPage, chromiumForTests, pageChecksTimeout } from '../helpers/page-check.js';
import type { Browserless } from '../helpers/web-client.js';

describe.each(engines)('recording memory on the console on %s', (engine) => {
  let c: ConsoleOrg;
  let owner: Browserless;
  let bea: Browserless;
  let cy: Browserless;
  let dee: Browserless;
  beforeAll(async () => {
    c = await startConsoleOrg(engine);
    [owner, bea, cy, dee] = await Promise.all([c.signIn(OWNER), c.signIn(BEA), c.signIn(CY), c.signIn(DEE)]);
  });
  afterAll(async () => {
    await c?.close();
  });

  const countItems = async () => (await c.org.service.database.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM memory_items`))[0].n;

  async function post(browser: Browserless, path: string, form: Record<string, string>) {
    const page = await browser.get(path);
    expect(page.status, path).toBe(200);
    return browser.post(path, { csrf: browser.hidden(page.text, 'csrf'), ...form });
  }

  it('records a fact in one of the person’s spaces, with the person as its provenance and no client', async () => {
    // Searched once before over MCP, so the page search_memory keeps in memory must be dropped by the web's write.
    const beaClient = await connectOrgMcp(c.org, { email: BEA.email, password: BEA.password, clientName: 'Bea tablet', scopes: ['memory:read'] });
    expect((await beaClient.callOk('search_memory', { query: 'quokka' })).items).toEqual([]);
    expect((await bea.get('/memory?q=quokka')).text).toContain('Nothing in memory matches.');
    const answer = await post(bea, '/memory/new', {
      kind: 'decision',
      space_id: c.spaces.general,
      title: 'Quokka is the office mascot',
      body: 'Decided at the all-hands: the quokka.',
      tags: 'Culture, culture , office',
      valid_from: '2026-12-01',
      valid_until: '2026-12-31',
    });
    expect(answer.status).toBe(303);
    const id = /^\/memory\/(mem_[^/]+)$/.exec(answer.headers.get('location') ?? '')?.[1];
    expect(id).toBeDefined();
    const [row] = await c.org.service.database.rows<Record<string, unknown>>(
      sql`SELECT kind, space_id, tags, recorded_by_type, recorded_by_name, client_id, operation_id, valid_from, valid_until FROM memory_items WHERE id = ${id}`,
    );
    expect(row).toMatchObject({ kind: 'decision', space_id: c.spaces.general, tags: ['culture', 'office'], recorded_by_type: 'person', recorded_by_name: BEA.name });
    expect(row.client_id).toBeNull();
    expect(row.operation_id).toBeNull();
    expect(new Date(row.valid_from as string).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(new Date(row.valid_until as string).toISOString()).toBe('2027-01-01T00:00:00.000Z');

    const item = await bea.get(`/memory/${id}`);
    expect(item.text).toContain('<h1>Quokka is the office mascot</h1>');
    expect(item.text).toContain(`${BEA.name} <small>(person)</small>`);
    expect(item.text).toContain('Through client</dt><dd>none: recorded on the web</dd>');
    expect((await bea.get('/memory?q=quokka')).text).toContain(`/memory/${id}`);
    expect((await beaClient.callOk('search_memory', { query: 'quokka' })).items.map((found: { id: string }) => found.id)).toEqual([id]);
    await beaClient.close();
    // The owner shares General and finds it too; Cy, who is not in General, does not.
    expect((await owner.get('/memory?q=quokka')).text).toContain(`/memory/${id}`);
    expect((await cy.get('/memory?q=quokka')).text).not.toContain(`/memory/${id}`);

    const [entry] = await c.org.service.database.rows<Record<string, unknown>>(
      sql`SELECT o.summary, o.space_id, o.client_id, p.email FROM org_activity o JOIN people p ON p.id = o.person_id WHERE o.kind = 'memory.written' AND o.subject = ${id}`,
    );
    expect(entry).toEqual({ summary: 'recorded the decision “Quokka is the office mascot”', space_id: c.spaces.general, client_id: null, email: BEA.email });
  });

  it('shows a refused form again with the problem and what was typed, and writes nothing', async () => {
    const before = await countItems();
    const emptyTitle = await post(bea, '/memory/new', { kind: 'fact', space_id: c.spaces.general, title: '   ', body: 'Kept text of the refused form.' });
    expect(emptyTitle.status).toBe(400);
    expect(emptyTitle.text).toContain('Nothing was saved');
    expect(emptyTitle.text).toMatch(/<li>Title: [^<]+<\/li>/);
    expect(emptyTitle.text).toContain('Kept text of the refused form.');
    const backwards = await post(bea, '/memory/new', { kind: 'fact', space_id: c.spaces.general, title: 'Backwards', body: 'x', valid_from: '2026-12-10', valid_until: '2026-12-01' });
    expect(backwards.status).toBe(400);
    expect(backwards.text).toMatch(/<li>Holds through: [^<]+<\/li>/);
    const badKind = await post(bea, '/memory/new', { kind: 'rumour', space_id: c.spaces.general, title: 'Rumour', body: 'x' });
    expect(badKind.status).toBe(400);
    expect(badKind.text).toMatch(/<li>Kind: [^<]+<\/li>/);
    const badDay = await post(bea, '/memory/new', { kind: 'fact', space_id: c.spaces.general, title: 'Bad day', body: 'x', valid_from: 'soon' });
    expect(badDay.status).toBe(400);
    expect(badDay.text).toContain('<li>Holds from: must be a date such as 2026-12-31</li>');
    expect(await countItems()).toBe(before);
  });

  it('records nothing in a space that is not the person’s own, an owner’s or admin’s included', async () => {
    const before = await countItems();
    // Bea is not in Backroom; the owner sees Hideaway but is not in it; Dee is an admin in no space.
    const bea404 = await post(bea, '/memory/new', { kind: 'fact', space_id: c.spaces.ops, title: 'Sneaky', body: 'x' });
    expect(bea404.status).toBe(404);
    const owner404 = await post(owner, '/memory/new', { kind: 'fact', space_id: c.spaces.secret, title: 'Sneaky', body: 'x' });
    expect(owner404.status).toBe(404);
    const deeForm = await dee.get('/memory/new');
    expect(deeForm.text).toContain('You are in no space yet');
    expect(deeForm.text).not.toContain('<form method="post" action="/memory/new"');
    expect((await dee.post('/memory/new', { csrf: dee.hidden(deeForm.text, 'csrf'), kind: 'fact', space_id: c.spaces.general, title: 'Sneaky', body: 'x' })).status).toBe(404);
    expect(await countItems()).toBe(before);
    // The form offers only the person's own spaces.
    const ownerForm = await owner.get('/memory/new');
    expect(ownerForm.text).toContain(`<option value="${c.spaces.general}"`);
    expect(ownerForm.text).toContain(`<option value="${c.spaces.ops}"`);
    expect(ownerForm.text).not.toContain(`<option value="${c.spaces.secret}"`);
  });

  it('records a new version that replaces the current one, keeping its space and history', async () => {
    const itemPage = await bea.get(`/memory/${c.memory.currentVersion}`);
    expect(itemPage.text).toContain(`href="/memory/${c.memory.currentVersion}/new-version"`);
    const form = await bea.get(`/memory/${c.memory.currentVersion}/new-version`);
    expect(form.text).toContain('value="Release train leaves on Wednesdays"');
    const answer = await bea.post(`/memory/${c.memory.currentVersion}/new-version`, {
      csrf: bea.hidden(form.text, 'csrf'),
      kind: 'decision',
      title: 'Release train leaves on Thursdays',
      body: 'Moved to Thursday mornings.',
      tags: 'release',
      // A space in the form is ignored: a new version stays in its item's space.
      space_id: c.spaces.secret,
    });
    expect(answer.status).toBe(303);
    const id = /^\/memory\/(mem_[^/]+)$/.exec(answer.headers.get('location') ?? '')?.[1];
    const [row] = await c.org.service.database.rows<Record<string, unknown>>(sql`SELECT supersedes, space_id FROM memory_items WHERE id = ${id}`);
    expect(row).toEqual({ supersedes: c.memory.currentVersion, space_id: c.spaces.general });
    const page = await bea.get(`/memory/${id}`);
    expect(page.text).toContain('Versions (3)');
    expect((await bea.get(`/memory/${c.memory.currentVersion}`)).text).toContain('This version was replaced.');

    // The replaced version is no longer current: its form and its post are refused, nothing written.
    const before = await countItems();
    expect((await bea.get(`/memory/${c.memory.currentVersion}/new-version`)).status).toBe(404);
    const stale = await bea.post(`/memory/${c.memory.currentVersion}/new-version`, { csrf: bea.hidden(page.text, 'csrf'), kind: 'fact', title: 'Stale', body: 'x' });
    expect(stale.status).toBe(404);
    expect(await countItems()).toBe(before);
  });

  it('offers no new version of an item outside the person’s own spaces', async () => {
    const secret = await owner.get(`/memory/${c.memory.secret}`);
    expect(secret.status).toBe(200);
    expect(secret.text).not.toContain('/new-version');
    expect((await owner.get(`/memory/${c.memory.secret}/new-version`)).status).toBe(404);
    expect((await cy.get(`/memory/${c.memory.secret}/new-version`)).status).toBe(404);
  });

  it('refuses a post without its form’s token, and sends someone signed out to sign in, writing nothing', async () => {
    const before = await countItems();
    const forged = await bea.post('/memory/new', { kind: 'fact', space_id: c.spaces.general, title: 'Forged', body: 'x' });
    expect(forged.status).toBe(403);
    const signedOut = await fetch(`${c.org.url}/memory/new`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ kind: 'fact', space_id: c.spaces.general, title: 'Anon', body: 'x' }),
      redirect: 'manual',
    });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe(`/signin?return_to=${encodeURIComponent('/memory')}`);
    expect(await countItems()).toBe(before);
  });

  describe('in a browser', () => {
    const chromium = chromiumForTests(() => c.org.url);

    it('records memory through the form and passes the browser check on both forms', { timeout: pageChecksTimeout(3) }, async () => {
      const page = await chromium.signedInPage(BEA);
      await page.goto(`${c.org.url}/memory`);
      await page.getByRole('button', { name: 'Record memory' }).click();
      const suffix = engine === 'pglite' ? '' : `-${engine}`;
      await checkPage(page, page.url(), `memory-new${suffix}`);
      await page.getByLabel('Kind').selectOption('instruction');
      await page.getByLabel('Title').fill('Answer the phone by the third ring');
      await page.getByLabel('Text').fill('Everyone, every day.');
      await page.getByRole('button', { name: 'Record', exact: true }).click();
      await page.waitForURL(/\/memory\/mem_/);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Answer the phone by the third ring');
      await page.getByRole('button', { name: 'Record a new version' }).click();
      await checkPage(page, page.url(), `memory-new-version${suffix}`);
      await page.context().close();
    });
  });
});
