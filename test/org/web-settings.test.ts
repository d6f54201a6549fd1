/**
 * The organization settings (issue 21 items 4 and 5): owners and admins choose on /settings which risk tiers a
 * person decides in their browser and whether MCP Apps may decide; the change is in the activity log with who made
 * it; a member is refused (403) and changes nothing; the organization file sets the same two when it names them,
 * `org export` writes them, and applying the export changes nothing.
 */
import { sql } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyOrgFile } from '../../src/org/org-file/apply.js';
import { exportOrgFile } from '../../src/org/org-file/export.js';
import { parseOrgFile } from '../../src/org/org-file/schema.js';
import { engines } from '../helpers/databases.js';
import { BEA, DEE, startMailOrg, type MailOrg } from '../helpers/mail-org.js';
import { OWNER } from '../helpers/org.js';
import { checkPage, launchChromium, pageChecksTimeout } from '../helpers/page-check.js';
import { signedInBrowserless } from '../helpers/web-client.js';

describe.each(engines)('organization settings, on %s', (engine) => {
  let mail: MailOrg;
  let browser: Browser;

  beforeAll(async () => {
    mail = await startMailOrg(engine);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await mail?.close();
  });

  async function settings(): Promise<{ decide_in_browser: string[]; in_app_decisions: boolean }> {
    const [row] = await mail.org.service.database.rows<{ decide_in_browser: string[]; in_app_decisions: boolean }>(
      sql`SELECT decide_in_browser, in_app_decisions FROM organization`,
    );
    return row;
  }

  it('lets an owner choose the tiers decided in the browser and in-app decisions, recorded in the activity log', async () => {
    const page = await browser.newPage();
    await page.goto(`${mail.org.url}/settings`);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${mail.org.url}/settings`);
    await checkPage(page, `${mail.org.url}/settings`, 'organization-settings');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Organization settings');
    expect(await page.getByRole('link', { name: 'Settings' }).getAttribute('aria-current')).toBe('page');

    await page.getByLabel('High-risk actions').check();
    await page.getByLabel('Critical actions').check();
    await page.getByLabel('Let an approval card inside an AI client approve or deny').check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.waitForURL(`${mail.org.url}/settings?saved=1`);
    expect(await page.getByRole('status').textContent()).toContain('Saved');
    expect(await page.getByLabel('High-risk actions').isChecked()).toBe(true);
    expect(await page.getByLabel('Low-risk actions').isChecked()).toBe(false);
    await checkPage(page, `${mail.org.url}/settings?saved=1`, 'organization-settings-saved');
    await page.close();

    expect(await settings()).toEqual({ decide_in_browser: ['high', 'critical'], in_app_decisions: true });
    const entries = await mail.org.service.database.rows<{ summary: string; person_id: string; details: any }>(
      sql`SELECT summary, person_id, details FROM org_activity WHERE kind = 'organization.settings_changed'`,
    );
    const [owner] = await mail.org.service.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${OWNER.email}`);
    expect(entries).toEqual([
      {
        summary: 'changed the organization settings: decided in the browser: none → high, critical; decisions in MCP Apps: allowed',
        person_id: owner.id,
        details: { from: { decide_in_browser: [], in_app_decisions: false }, to: { decide_in_browser: ['high', 'critical'], in_app_decisions: true } },
      },
    ]);
  }, pageChecksTimeout(2));

  it('refuses a member the page and the form (403), changing nothing; an admin may open it', async () => {
    const before = await settings();
    const bea = await signedInBrowserless(mail.org.url, BEA);
    expect((await bea.get('/settings')).status).toBe(403);
    const home = await bea.get('/');
    expect(home.text).not.toContain('href="/settings"');
    const refused = await bea.post('/settings', { csrf: bea.hidden(home.text, 'csrf'), decide_in_browser: [], in_app_decisions: '0' });
    expect(refused.status).toBe(403);
    expect(await settings()).toEqual(before);

    const dee = await signedInBrowserless(mail.org.url, DEE);
    const page = await dee.get('/settings');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Organization settings');
  });

  it('refuses a tier that does not exist (400), changing nothing', async () => {
    const before = await settings();
    const dee = await signedInBrowserless(mail.org.url, DEE);
    const page = await dee.get('/settings');
    const refused = await dee.post('/settings', { csrf: dee.hidden(page.text, 'csrf'), decide_in_browser: ['urgent'] });
    expect(refused.status).toBe(400);
    expect(await settings()).toEqual(before);
  });

  it('exports the settings, and applying the export changes nothing; a file naming them sets them, one leaving them out keeps them', async () => {
    const db = mail.org.service.database.db;
    await mail.org.service.database.rows(sql`UPDATE organization SET decide_in_browser = '["high","critical"]'::jsonb, in_app_decisions = true RETURNING id`);
    const exported = await exportOrgFile(db);
    expect(parseOrgFile(exported).organization).toMatchObject({ decide_in_browser: ['high', 'critical'], in_app_decisions: true });
    await applyOrgFile(db, parseOrgFile(exported), process.env);
    expect(await exportOrgFile(db)).toBe(exported);

    await applyOrgFile(db, parseOrgFile('organization: { name: Mail Co, client_autonomy: 2 }\n'), process.env);
    expect(await settings()).toEqual({ decide_in_browser: ['high', 'critical'], in_app_decisions: true });
    await applyOrgFile(db, parseOrgFile('organization: { name: Mail Co, client_autonomy: 2, decide_in_browser: [critical], in_app_decisions: false }\n'), process.env);
    expect(await settings()).toEqual({ decide_in_browser: ['critical'], in_app_decisions: false });
    expect(() => parseOrgFile('organization: { name: Mail Co, decide_in_browser: [high, high] }\n')).toThrow(/decide_in_browser.*twice/);
  });
});
