/**
 * The management pages in Chromium (issue 20 item 1, DESIGN 4.6): /people as an owner with a space chosen, the
 * invitation's one-time link, the removal confirmation, /rules with file and console rules, a rule's deletion
 * confirmation, the rule form and a refused form — axe-core finds nothing serious or critical and nothing scrolls
 * sideways at a desktop's and a phone's width (screenshots in test-artifacts/screenshots). And a rule made with the
 * form in the browser, without JavaScript's help, is listed.
 */
import { sql } from 'drizzle-orm';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { startManageOrg, type ManageOrg } from '../helpers/people-org.js';
import { OWNER } from '../helpers/org.js';
import { checkPage, launchChromium, PAGE_CHECK_ENGINE, pageChecksTimeout } from '../helpers/page-check.js';
import { signInAs } from '../helpers/sdk-oauth.js';

describe.each(engines)('the management pages in a browser on %s', (engine) => {
  let m: ManageOrg;
  let browser: Browser;
  /** The owner's browser; `plain` is the same person with JavaScript off, as the forms must work without it. */
  let context: BrowserContext;
  let plain: BrowserContext;
  let personId: string;
  beforeAll(async () => {
    m = await startManageOrg(engine);
    ({ id: personId } = await m.addPerson({ email: 'kim.with.a.rather.long.address@example.com', name: 'Kim Longname', spaceIds: [m.spaces.general] }));
    await m.invite(m.owner, { email: 'waiting@example.com', name: 'Wanda Waiting', role: 'admin' });
    await m.org.service.database.rows(sql`UPDATE standing_rules SET managed_by = 'file'`);
    browser = await launchChromium();
    [context, plain] = await Promise.all([signedIn({}), signedIn({ javaScriptEnabled: false })]);
  });
  afterAll(async () => {
    await browser?.close();
    await m?.close();
  });

  async function signedIn(options: { javaScriptEnabled?: boolean }): Promise<BrowserContext> {
    const signedIn = await browser.newContext(options);
    const page = await signedIn.newPage();
    await page.goto(`${m.org.url}/signin`);
    await signInAs(page, OWNER.email, OWNER.password);
    await page.waitForURL((url) => url.pathname !== '/signin');
    await page.close();
    return signedIn;
  }

  const shot = (name: string) => (engine === 'pglite' ? name : `${name}-${engine}`);
  const at = (path: string) => async (page: Page) => page.goto(`${m.org.url}${path}`);

  it('makes a shadow rule with the form, without JavaScript, and lists it', async () => {
    const page = await plain.newPage();
    await page.goto(`${m.org.url}/rules/standing/new`);
    await page.getByLabel('Name (shown in verdicts)').fill('Watch big notices');
    await page.getByLabel('high').check();
    await page.getByLabel('Capability keys (separated by commas)').fill('notify_team');
    await page.getByLabel('sat').check();
    await page.getByLabel('Time zone of weekdays and hours, such as Europe/Berlin').fill('Europe/Berlin');
    await page.getByLabel('Then').selectOption('require_approval');
    await page.getByLabel('Approvals needed, 2 to 10 different people (only with approval; empty means one)').fill('2');
    await page.getByLabel('Shadow: only record what it would have done').check();
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.waitForURL(`${m.org.url}/rules?done=created`);
    const row = page.getByRole('row', { name: /Watch big notices/ });
    await expect(row.textContent()).resolves.toContain('capability notify_team · risk high · on sat · (Europe/Berlin)');
    await expect(row.textContent()).resolves.toContain('shadow: would have fired 0 times in the last 30 days');
    await page.close();
  });

  const pages: Array<[string, (page: Page) => Promise<unknown>]> = [
    ['manage-people', at('/people')],
    ['manage-space', async (page) => page.goto(`${m.org.url}/people?space=${m.spaces.general}`)],
    [
      'invitation-ready',
      async (page) => {
        await page.goto(`${m.org.url}/people`);
        await page.getByLabel('Email', { exact: true }).fill(`new-${Math.random().toString(36).slice(2)}@example.com`);
        await page.getByLabel('Name', { exact: true }).fill('Nora New');
        await page.getByRole('button', { name: 'Create invitation link' }).click();
        await page.getByRole('heading', { name: 'Invitation ready' }).waitFor();
      },
    ],
    [
      'rename-open',
      async (page) => {
        await page.goto(`${m.org.url}/people`);
        await page.getByText('Rename', { exact: true }).and(page.getByLabel('Rename Kim Longname')).click();
        await page.getByLabel('New name for Kim Longname').waitFor();
      },
    ],
    [
      'remove-confirm',
      async (page) => {
        await page.goto(`${m.org.url}/people`);
        await page.getByRole('button', { name: 'Remove Kim Longname' }).click();
        await page.getByRole('heading', { name: 'Remove Kim Longname?' }).waitFor();
      },
    ],
    ['rules', at('/rules')],
    [
      'rule-delete-confirm',
      async (page) => {
        await page.goto(`${m.org.url}/rules`);
        await page.getByRole('button', { name: 'Delete Watch big notices' }).click();
        await page.getByRole('heading', { name: 'Delete the rule Watch big notices?' }).waitFor();
      },
    ],
    ['rule-new', at('/rules/standing/new')],
    [
      'rule-refused',
      async (page) => {
        await page.goto(`${m.org.url}/rules/standing/new`);
        await page.getByLabel('Name (shown in verdicts)').fill('Broken');
        await page.getByLabel('Hours, such as 09:00-17:00').fill('09:00-17:00');
        await page.getByRole('button', { name: 'Create rule' }).click();
        await page.getByRole('heading', { name: 'Nothing was changed' }).waitFor();
      },
    ],
  ];

  it.runIf(engine === PAGE_CHECK_ENGINE).each(pages)('passes the browser check on %s', { timeout: pageChecksTimeout(1) }, async (name, target) => {
    const page = await context.newPage();
    await checkPage(page, target, shot(name));
    await page.close();
  });

  // What the page checks above only asked about (a removal, a deletion) is still there.
  it.runIf(engine === PAGE_CHECK_ENGINE)('still holds the person whose removal and the rule whose deletion were only asked about', async () => {
    const [row] = await m.org.service.database.rows(sql`SELECT status FROM people WHERE id = ${personId}`);
    expect(row).toEqual({ status: 'active' });
    expect(await m.org.service.database.rows(sql`SELECT name FROM standing_rules WHERE name = 'Watch big notices'`)).toEqual([{ name: 'Watch big notices' }]);
  });
});
