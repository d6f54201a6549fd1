/**
 * The account page (DESIGN 4.6) in a real browser: a signed-in person changes their password with the current
 * one and a new one following the rule of ATRIUM_ADMIN_PASSWORD; their other web sessions are signed out, the
 * one they changed it in is not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { Browserless } from '../helpers/web-client.js';

const screenshots = process.env.ATRIUM_SCREENSHOTS ?? '/tmp';

describe.each(engines)('changing a password on /account on %s', (engine) => {
  let org: TestOrg;
  let browser: Browser;
  beforeAll(async () => {
    org = await startOrg(engine);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await org?.close();
  });

  async function signIn(password: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 375, height: 800 } });
    await page.goto(`${org.url}/account`);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${org.url}/account`);
    return page;
  }

  async function changePassword(page: Page, current: string, next: string): Promise<void> {
    await page.getByLabel('Current password').fill(current);
    await page.getByLabel('New password (at least 8 characters)').fill(next);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForLoadState();
  }

  it('is linked from the header and the home page, and sends someone signed out to sign in first', async () => {
    const signedOut = await new Browserless(org.url).get('/account');
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe('/signin?return_to=%2Faccount');
    const page = await signIn(OWNER.password);
    await expect(page.getByRole('navigation').getByRole('link', { name: 'Account' }).getAttribute('href')).resolves.toBe('/account');
    await page.goto(`${org.url}/`);
    await expect(page.getByRole('link', { name: 'Your account' }).getAttribute('href')).resolves.toBe('/account');
    await page.close();
  });

  it('refuses a wrong current password and a new one shorter than 8 characters, changing nothing', async () => {
    const page = await signIn(OWNER.password);
    await changePassword(page, 'not-the-password', 'another-password-1');
    await expect(page.getByRole('alert').textContent()).resolves.toBe('The current password is not right.');
    await page.screenshot({ path: `${screenshots}/account-refused-${engine}.png`, fullPage: true }).catch(() => {});
    // The browser already holds a short one back (minlength); the service refuses it too.
    await expect(page.getByLabel('New password (at least 8 characters)').getAttribute('minlength')).resolves.toBe('8');
    const form = new Browserless(org.url);
    await form.signIn(OWNER.email, OWNER.password);
    const account = await form.get('/account');
    const short = await form.post('/account/password', { csrf: form.hidden(account.text, 'csrf'), current_password: OWNER.password, new_password: 'short' });
    expect(short.text).toContain('<p class="error" role="alert" id="password-error">The new password must be at least 8 characters.</p>');
    expect((await new Browserless(org.url).signIn(OWNER.email, OWNER.password)).status).toBe(303);
    await page.close();
  });

  it('changes the password and signs out the other sessions, not this one', async () => {
    const elsewhere = new Browserless(org.url);
    await elsewhere.signIn(OWNER.email, OWNER.password);
    expect((await elsewhere.get('/inbox')).status).toBe(200);

    const next = 'a-brand-new-password-1';
    const page = await signIn(OWNER.password);
    await changePassword(page, OWNER.password, next);
    await expect(page.getByRole('status').textContent()).resolves.toBe('Your password was changed. Your other sessions were signed out.');
    await page.screenshot({ path: `${screenshots}/account-changed-${engine}.png`, fullPage: true }).catch(() => {});
    // This session goes on; the other one is over.
    await page.goto(`${org.url}/inbox`);
    expect(new URL(page.url()).pathname).toBe('/inbox');
    expect((await elsewhere.get('/inbox')).status).toBe(303);
    // Only the new password signs in now.
    expect((await new Browserless(org.url).signIn(OWNER.email, OWNER.password)).status).toBe(200);
    expect((await new Browserless(org.url).signIn(OWNER.email, next)).status).toBe(303);

    await page.goto(`${org.url}/account`);
    await changePassword(page, next, OWNER.password);
    await page.close();
  });

  it('refuses the form without its CSRF token', async () => {
    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    const response = await browser.post('/account/password', { current_password: OWNER.password, new_password: 'another-password-1' });
    expect(response.status).toBe(403);
    expect((await new Browserless(org.url).signIn(OWNER.email, OWNER.password)).status).toBe(303);
  });
});
