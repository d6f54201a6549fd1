/**
 * /ask: a person asks the organization's assistant from the console, through the `ask` operation a client starts,
 * answered from their own spaces with citations that lead to the items; only the asker sees the answer and their
 * earlier questions; a refused question starts nothing.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEA, CY, DEE, startConsoleOrg, type ConsoleOrg } from '../helpers/console-org.js';
import { engines } from '../helpers/databases.js';
import { checkPage, chromiumForTests, pageChecksTimeout } from '../helpers/page-check.js';
import type { Browserless } from '../helpers/web-client.js';

describe.each(engines)('asking the assistant on the console on %s', (engine) => {
  let c: ConsoleOrg;
  let bea: Browserless;
  let cy: Browserless;
  beforeAll(async () => {
    c = await startConsoleOrg(engine);
    [bea, cy] = await Promise.all([c.signIn(BEA), c.signIn(CY)]);
  });
  afterAll(async () => {
    await c?.close();
  });

  const countAsks = async () => (await c.org.service.database.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM operations WHERE kind = 'ask'`))[0].n;

  async function ask(browser: Browserless, form: Record<string, string>) {
    const page = await browser.get('/ask');
    expect(page.status).toBe(200);
    return browser.post('/ask', { csrf: browser.hidden(page.text, 'csrf'), ...form });
  }

  it('answers from the person’s own spaces, citing the items, as an ask operation without a client', async () => {
    const answer = await ask(bea, { question: 'What is the zebra plan?' });
    expect(answer.status).toBe(303);
    const id = /^\/ask\/(op_[^/]+)$/.exec(answer.headers.get('location') ?? '')?.[1];
    expect(id).toBeDefined();
    const page = await bea.get(`/ask/${id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('What is the zebra plan?');
    expect(page.text).toContain(`<a href="/memory/${c.memory.secret}">Hideaway zebra plan</a>`);
    expect(page.text).toContain('The zebra plan stays in the hideaway.');
    // Backroom is Cy's space, not Bea's: its zebra runbook is not cited.
    expect(page.text).not.toContain(c.memory.ops);
    expect(page.text).not.toContain('Opsworth');
    const [row] = await c.org.service.database.rows<Record<string, unknown>>(
      sql`SELECT o.status, o.client_id, p.email FROM operations o JOIN people p ON p.id = o.person_id WHERE o.id = ${id}`,
    );
    expect(row).toEqual({ status: 'succeeded', client_id: null, email: BEA.email });
  });

  it('answers from the one space asked for', async () => {
    const answer = await ask(bea, { question: 'What is the zebra plan?', space_id: c.spaces.general });
    const page = await bea.get(answer.headers.get('location') ?? '');
    expect(page.text).toContain('<dd>General</dd>');
    expect(page.text).toContain('<h2>Cited (');
    expect(page.text).not.toContain(c.memory.secret);
    expect(page.text).not.toContain('Hideaway');
  });

  it('shows an answer to its asker alone, as an unknown one to anyone else', async () => {
    const answer = await ask(bea, { question: 'When does the release train leave?' });
    const path = answer.headers.get('location') ?? '';
    expect((await bea.get(path)).text).toContain(`/memory/${c.memory.currentVersion}`);
    const other = await cy.get(path);
    const unknown = await cy.get('/ask/op_doesnotexist');
    expect(other.status).toBe(404);
    expect(other.text).toBe(unknown.text);
    // An operation that is not a question is not shown here either.
    expect((await bea.get(`/ask/${c.operation}`)).status).toBe(404);
  });

  it('refuses an empty question and a space not the person’s, starting nothing', async () => {
    const before = await countAsks();
    const empty = await ask(bea, { question: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.text).toMatch(/<li>Question: [^<]+<\/li>/);
    const elsewhere = await ask(bea, { question: 'What is in the backroom?', space_id: c.spaces.ops });
    expect(elsewhere.status).toBe(404);
    expect((await bea.post('/ask', { question: 'Forged?' })).status).toBe(403);
    expect(await countAsks()).toBe(before);
  });

  it('lists the person’s own earlier questions under the form, newest first, each linked to its answer, paged', async () => {
    const mine: string[] = [];
    for (let n = 1; n <= 11; n++) {
      const answer = await ask(bea, { question: `Question number ${n} about the zebra plan?` });
      mine.push(answer.headers.get('location') ?? '');
    }
    const theirs = await ask(cy, { question: 'What does Cy alone ask?' });
    const page = await bea.get('/ask');
    const listed = [...page.text.matchAll(/<a href="(\/ask\/op_[^"]+)">([^<]+)<\/a>/g)].map((match) => [match[1], match[2]]);
    expect(listed).toHaveLength(10);
    expect(listed.slice(0, 3)).toEqual([11, 10, 9].map((n) => [mine[n - 1], `Question number ${n} about the zebra plan?`]));
    expect(page.text).not.toContain('What does Cy alone ask?');
    expect(page.text).not.toContain(theirs.headers.get('location'));
    // The link lands on the list rather than the form above it.
    const older = /<a href="(\/ask\?before=[^"#]+)#earlier-questions"[^>]*>Older questions<\/a>/.exec(page.text)?.[1];
    expect(older).toBeDefined();
    const next = await bea.get(older!.replaceAll('&amp;', '&'));
    expect(next.status).toBe(200);
    expect(next.text).toContain('<h2 id="earlier-questions">Older questions</h2>');
    expect(next.text).toContain(`<a href="${mine[0]}">Question number 1 about the zebra plan?</a>`);
    expect(next.text).not.toContain('Question number 2 about');
    // A stranger's first visit: none yet.
    const dee = await c.signIn(DEE);
    expect((await dee.get('/ask')).text).toContain('None yet: what you ask is kept here with its answer.');
  });

  it('names a question on the operations list, cut to a line, and links its operation to the answer for the asker alone', async () => {
    const long = `What is the zebra plan ${'and then some more words '.repeat(8)}in the end?`;
    expect(long.length).toBeGreaterThan(120);
    const path = (await ask(bea, { question: long })).headers.get('location') ?? '';
    const id = path.slice('/ask/'.length);
    const cut = `${long.slice(0, 119)}…`;
    const list = await bea.get('/operations?kind=ask');
    expect(list.text).toContain(`<small>: ${cut}</small>`);
    const operation = await bea.get(`/operations/${id}`);
    expect(operation.text).toContain(`ask operation: ${cut}`);
    expect(operation.text).toContain(`<a href="/ask/${id}">The assistant’s answer</a>`);
    // An admin sees the operation, not a link to an answer only its asker may open.
    const dee = await c.signIn(DEE);
    const seen = await dee.get(`/operations/${id}`);
    expect(seen.status).toBe(200);
    expect(seen.text).toContain(`ask operation: ${cut}`);
    expect(seen.text).not.toContain(`href="/ask/${id}"`);
  });

  it('is linked from the header', async () => {
    expect((await bea.get('/')).text).toContain('<a href="/ask">Ask</a>');
  });

  describe('in a browser', () => {
    const chromium = chromiumForTests(() => c.org.url);

    it('asks through the form and passes the browser check on the form and the answer', { timeout: pageChecksTimeout(2) }, async () => {
      const page = await chromium.signedInPage(BEA);
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Ask', exact: true }).click();
      const suffix = engine === 'pglite' ? '' : `-${engine}`;
      await checkPage(page, page.url(), `ask${suffix}`);
      await page.getByRole('textbox', { name: 'Question' }).fill('When does the release train leave?');
      await page.getByRole('button', { name: 'Ask', exact: true }).click();
      await page.waitForURL(/\/ask\/op_/);
      await expect(page.getByRole('link', { name: 'Release train leaves on Wednesdays' }).count()).resolves.toBe(1);
      await checkPage(page, page.url(), `ask-answer${suffix}`);
      await page.context().close();
    });
  });
});
