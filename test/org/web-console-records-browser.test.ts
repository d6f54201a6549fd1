/**
 * The memory, tasks and people pages in Chromium (issue 19 item 7): axe-core finds nothing serious or critical
 * and nothing scrolls sideways at a desktop's and a phone's width, screenshots kept in test-artifacts/screenshots;
 * and a member's pages, as a browser shows them, hold nothing of a space they are not in.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEA, startConsoleOrg, type ConsoleOrg } from '../helpers/console-org.js';
import { engines } from '../helpers/databases.js';
import { OWNER } from '../helpers/org.js';
import { checkPage, launchChromium, PAGE_CHECK_ENGINE, pageChecksTimeout } from '../helpers/page-check.js';

describe.each(engines)('the memory, tasks and people pages in a browser on %s', (engine) => {
  let c: ConsoleOrg;
  let browser: Browser;
  const contexts: Record<'owner' | 'member', BrowserContext> = {} as never;

  beforeAll(async () => {
    c = await startConsoleOrg(engine);
    browser = await launchChromium();
    for (const [who, person] of [['owner', OWNER], ['member', BEA]] as const) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${c.org.url}/signin`);
      await page.getByLabel('Email').fill(person.email);
      await page.getByLabel('Password').fill(person.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname !== '/signin');
      await page.close();
      contexts[who] = context;
    }
  });
  afterAll(async () => {
    await browser?.close();
    await c?.close();
  });

  const paths = {
    memory: () => '/memory',
    'memory-search': () => '/memory?q=release',
    'memory-item': () => `/memory/${c.memory.currentVersion}`,
    tasks: () => '/tasks',
    task: () => `/tasks/${c.tasks.worked}`,
    'task-new': () => '/tasks/new',
    'task-scheduled': () => `/tasks/${c.tasks.weekly}`,
    people: () => '/people',
  };
  const cases = Object.keys(paths).flatMap((name) => (['owner', 'member'] as const).map((who) => ({ name: name as keyof typeof paths, who })));

  it.runIf(engine === PAGE_CHECK_ENGINE).each(cases)('passes the browser check on $name for the $who', { timeout: pageChecksTimeout(1) }, async ({ name, who }) => {
    const page = await contexts[who].newPage();
    const shot = engine === 'pglite' ? `${name}-${who}` : `${name}-${who}-${engine}`;
    await checkPage(page, `${c.org.url}${paths[name]()}`, shot);
    await page.close();
  });

  it.runIf(engine === PAGE_CHECK_ENGINE)('passes the browser check on the new-task form refused for its schedule, filled in as the person left it', { timeout: pageChecksTimeout(1) }, async () => {
    const page = await contexts.member.newPage();
    await checkPage(
      page,
      async (opened) => {
        await opened.goto(`${c.org.url}/tasks/new`);
        await opened.getByLabel('Title').fill('Water the plants');
        await opened.getByLabel('Assign to').selectOption({ label: 'Scribe' });
        await opened.getByLabel('Repeatedly, on the cron expression below').check();
        await opened.getByLabel('Cron expression (repeatedly)').fill('0 9 * *');
        await Promise.all([opened.waitForURL(`${c.org.url}/tasks`), opened.getByRole('button', { name: 'Create task' }).click()]);
        const problems = await opened.getByRole('alert').textContent();
        expect(problems).toContain('Cron expression: expected five fields');
        expect(problems).toContain('Time zone: an IANA time zone such as Europe/Berlin is required');
        expect(await opened.getByLabel('Title').inputValue()).toBe('Water the plants');
      },
      engine === 'pglite' ? 'task-new-refused-member' : `task-new-refused-member-${engine}`,
    );
    await page.close();
  });

  it('shows a member nothing of another space on any of them, whatever they search for', async () => {
    const page = await contexts.member.newPage();
    for (const path of [...Object.values(paths).map((path) => path()), '/memory?q=zebra', '/memory?q=opsworth']) {
      await page.goto(`${c.org.url}${path}`);
      const content = await page.content();
      for (const hidden of [c.memory.ops, c.tasks.ops, c.spaces.ops, 'Opsworth', 'Backroom', 'Rotate the zebra keys', 'cy@example.com']) {
        expect(content, `${path} shows ${hidden}`).not.toContain(hidden);
      }
    }
    await page.close();
  });
});
