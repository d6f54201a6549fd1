/**
 * The inbox's open task questions (DESIGN 4.6): a question an agent asked on a task in the person's space is
 * listed with Answer; answering there answers the task as answer_task does, and the question leaves the inbox.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { launchChromium } from '../helpers/page-check.js';
import { signInAs } from '../helpers/sdk-oauth.js';
import { Browserless } from '../helpers/web-client.js';
import { startTask, askTaskQuestion } from '../../src/org/tasks/agent.js';
import { taskOperationInput } from '../../src/org/tasks/records.js';
import { defineOperationKind } from '../../src/org/operations/kinds.js';

describe.each(engines)('task questions in the inbox on %s', (engine) => {
  let org: TestOrg;
  let owner: OrgMcp;

  beforeAll(async () => {
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-inbox-')), 'org.yaml');
    await writeFile(
      orgFile,
      `spaces: [{ key: general, name: General, members: [${OWNER.email}] }]
agents:
  - { key: scribe, name: Scribe, autonomy: 2, responsible: ${OWNER.email}, delivery: { kind: webhook, url: "http://127.0.0.1:9/agent" } }
`,
    );
    // The agent's side stands still: the task operation stays running, as with an agent answering later.
    org = await startOrg(engine, { config: { orgFile }, operationKinds: [defineOperationKind({ kind: 'task', input: taskOperationInput, run: async () => ({ status: 'running' }) })] });
    owner = await connectOrgMcp(org, { scopes: ['task:read', 'task:write'] });
  });
  afterAll(async () => {
    await owner?.close();
    await org?.close();
  });

  /** A task assigned to the scribe, started, with one open question from it. */
  async function askedTask(title: string, text: string) {
    const context = await owner.callOk('service_context');
    const scribe = context.agents.find((agent: { key: string }) => agent.key === 'scribe').id;
    const task = await owner.callOk('create_task', { space_id: context.spaces[0].id, title, assignee_agent_id: scribe });
    await startTask(org.service.ctx.db, task.id);
    const questionId = await askTaskQuestion(org.service.ctx.db, task.id, { text, askedBy: scribe });
    return { context, task, questionId };
  }

  it('lists the question with Answer, and answering it there answers the task', async () => {
    const { context, task, questionId } = await askedTask('Plan the offsite', 'Which city?');

    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    const inbox = await browser.get('/inbox');
    expect(inbox.text).toContain('aria-label="Question on Plan the offsite"');
    expect(inbox.text).toContain('Which city?');
    expect(inbox.text).toContain('<button type="submit">Answer</button>');
    // The home's Answer leads to this question's answer field in the inbox.
    expect((await browser.get('/')).text).toContain(`<a href="/inbox#answer-${questionId}">Answer</a>`);
    expect(inbox.text).toContain(`id="answer-${questionId}"`);
    // The header's count beside Inbox includes the question, on every personal page.
    expect((await browser.get('/rules')).text).toContain('Inbox <span class="count" data-pending-count>1<span class="visually-hidden"> pending</span></span>');
    const forged = await browser.post('/inbox/answer', { csrf: 'forged', task_id: task.id, question_id: questionId, answer: 'Nowhere' });
    expect(forged.status).toBe(403);

    const answered = await browser.post('/inbox/answer', {
      csrf: browser.hidden(inbox.text, 'csrf'),
      task_id: browser.hidden(inbox.text, 'task_id'),
      question_id: browser.hidden(inbox.text, 'question_id'),
      answer: 'Lisbon',
    });
    expect(answered.status).toBe(303);
    expect(answered.headers.get('location')).toBe('/inbox?done=answered');
    const after = await owner.callOk('get_task', { task_id: task.id });
    expect(after.questions).toEqual([expect.objectContaining({ id: questionId, answer: 'Lisbon', answered_by: { type: 'person', id: context.person.id } })]);
    const emptied = (await browser.get('/inbox')).text;
    expect(emptied).toContain('No open questions.');
    expect(emptied).toContain('<span class="count" data-pending-count hidden>0<');
  });

  it('keeps the navigation count current through /inbox/count, and answers 401 JSON to someone not signed in', async () => {
    const signedOut = await fetch(`${org.url}/inbox/count`);
    expect(signedOut.status).toBe(401);
    expect(signedOut.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await signedOut.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });

    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    const count = async () => {
      const response = await browser.get('/inbox/count');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-store');
      return JSON.parse(response.text);
    };
    expect(await count()).toEqual({ pending: 0 });

    // A page left open: console.js asks /inbox/count when the page becomes visible again (and every 30 s).
    const chromium = await launchChromium();
    try {
      const page = await chromium.newPage();
      await page.goto(`${org.url}/account`);
      await signInAs(page, OWNER.email, OWNER.password);
      await page.waitForURL(`${org.url}/account`);
      // Nothing pending: the count is hidden, and the link is named Inbox alone.
      await expect(page.getByRole('link', { name: 'Inbox', exact: true }).count()).resolves.toBe(1);

      const { task, questionId } = await askedTask('Book the venue', 'How many people?');
      expect(await count()).toEqual({ pending: 1 });
      // The same number the pages show beside Inbox.
      expect((await browser.get('/account')).text).toContain('data-pending-count>1<');
      await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
      await expect.poll(() => page.getByRole('link', { name: 'Inbox 1 pending' }).count()).toBe(1);

      await owner.callOk('answer_task', { task_id: task.id, question_id: questionId, answer: 'Twelve' });
      expect(await count()).toEqual({ pending: 0 });
      await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
      await expect.poll(() => page.getByRole('link', { name: 'Inbox', exact: true }).count()).toBe(1);
    } finally {
      await chromium.close();
    }
  });
});
