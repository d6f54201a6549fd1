/**
 * Where a person is signed in (/account): each live web session is listed by the browser it signed in with, this one
 * marked, and "Sign out everywhere else" ends every other session of the person at once (recorded as
 * `person.signed_out`), leaving this one and other people's alone. Checked over HTTP and in Chromium at both widths.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER } from '../helpers/org.js';
import { startManageOrg, type ManageOrg } from '../helpers/people-org.js';
import { checkPage, chromiumForTests, pageChecksTimeout } from '../helpers/page-check.js';
import { Browserless } from '../helpers/web-client.js';

const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0';
const SAFARI_PHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

describe.each(engines)('where a person is signed in, on %s', (engine) => {
  let m: ManageOrg;
  const chromium = chromiumForTests(() => m.org.url);
  beforeAll(async () => {
    m = await startManageOrg(engine);
  });
  afterAll(async () => {
    await m?.close();
  });

  const signedIn = async (userAgent?: string) => {
    const browser = new Browserless(m.org.url, new Map(), userAgent ? { 'user-agent': userAgent } : {});
    expect((await browser.signIn(OWNER.email, OWNER.password)).status).toBe(303);
    return browser;
  };
  const csrfOf = async (browser: Browserless) => browser.hidden((await browser.get('/account')).text, 'csrf');
  const signOutElsewhere = async (browser: Browserless, csrf?: string) => browser.post('/account/sessions', csrf === undefined ? {} : { csrf });
  const rows = (browser: string) => [...browser.matchAll(/<th scope="row">([^<]*)(<strong> \(this browser\)<\/strong>)?<\/th>/g)].map((match) => [match[1], !!match[2]]);
  const section = (html: string) => html.slice(html.indexOf('<h2 id="signed-in">'));
  const signedOutEntries = () =>
    m.org.service.database.rows<{ summary: string; details: { sessions_ended: number } }>(
      sql`SELECT summary, details FROM org_activity WHERE kind = 'person.signed_out' ORDER BY seq`,
    );

  it('lists each browser the person is signed in on, newest first, this one marked', async () => {
    const firefox = await signedIn(FIREFOX);
    const phone = await signedIn(SAFARI_PHONE);
    const page = section((await phone.get('/account')).text);
    expect(rows(page).slice(0, 2)).toEqual([
      ['Safari 18 on iOS', true],
      ['Firefox 140 on Windows', false],
    ]);
    expect(page).toContain('Ends your ');
    expect(rows(section((await firefox.get('/account')).text)).slice(0, 2)).toEqual([
      ['Safari 18 on iOS', false],
      ['Firefox 140 on Windows', true],
    ]);
    // A client that names no browser it can be told by, and one that sends no User-Agent at all.
    const node = await signedIn();
    expect(rows(section((await node.get('/account')).text))[0]).toEqual(['An unknown browser', true]);
  });

  it('signs out everywhere else at once, keeping this browser and recording it', async () => {
    const here = await signedIn(FIREFOX);
    // The earlier tests' sessions first, so the count below is of these two alone.
    expect((await signOutElsewhere(here, await csrfOf(here))).status).toBe(303);
    // One that has run out: neither listed nor counted.
    const stale = await signedIn(SAFARI_PHONE);
    await m.org.service.database.rows(
      sql`UPDATE web_sessions SET expires_at = now() - interval '1 minute' WHERE id = (SELECT id FROM web_sessions ORDER BY created_at DESC LIMIT 1)`,
    );
    expect((await stale.get('/inbox')).status).toBe(303);
    const others = [await signedIn(FIREFOX), await signedIn(SAFARI_PHONE)];
    expect(rows(section((await here.get('/account')).text))).toHaveLength(3);
    const before = (await signedOutEntries()).length;
    const ended = await signOutElsewhere(here, await csrfOf(here));
    expect(ended.status).toBe(303);
    expect(ended.headers.get('location')).toBe('/account?done=sessions&ended=2#signed-in');
    for (const other of others) {
      const refused = await other.get('/inbox');
      expect(refused.status).toBe(303);
      expect(refused.headers.get('location')).toMatch(/^\/signin/);
    }
    const page = await here.get('/account?done=sessions&ended=2');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<p role="status">Signed out of 2 other sessions.</p>');
    expect(rows(section(page.text))).toEqual([['Firefox 140 on Windows', true]]);
    expect(page.text).toContain('Only this browser is signed in.');
    expect(page.text).not.toContain('Sign out everywhere else');
    const entries = await signedOutEntries();
    expect(entries.slice(before)).toEqual([{ summary: 'signed out of 2 other web sessions', details: { sessions_ended: 2 } }]);

    // Again, with nothing left to end: said, and nothing recorded.
    const again = await signOutElsewhere(here, await csrfOf(here));
    expect(again.headers.get('location')).toBe('/account?done=sessions&ended=0#signed-in');
    expect((await here.get('/account?done=sessions&ended=0')).text).toContain('You were not signed in anywhere else.');
    expect(await signedOutEntries()).toHaveLength(before + 1);
  });

  it("leaves another person's sessions alone", async () => {
    const mine = await signedIn(FIREFOX);
    const { link } = await m.invite(mine, { email: 'kim@example.com', name: 'Kim' });
    const { browser: kim, answer } = await m.join(link!, 'kim-password-123');
    expect(answer.status).toBe(303);
    const kimOnPhone = new Browserless(m.org.url, new Map(), { 'user-agent': SAFARI_PHONE });
    expect((await kimOnPhone.signIn('kim@example.com', 'kim-password-123')).status).toBe(303);
    expect(rows(section((await kim.get('/account')).text))).toEqual([
      ['Safari 18 on iOS', false],
      ['An unknown browser', true],
    ]);

    expect((await signOutElsewhere(mine, await csrfOf(mine))).status).toBe(303);
    expect((await kim.get('/inbox')).status).toBe(200);
    expect((await kimOnPhone.get('/inbox')).status).toBe(200);
  });

  it('refuses the button without its CSRF token or signed out, and ignores a made-up count', async () => {
    const other = await signedIn(FIREFOX);
    const here = await signedIn(FIREFOX);
    expect((await signOutElsewhere(here)).status).toBe(403);
    expect((await signOutElsewhere(here, 'not-a-token')).status).toBe(403);
    expect((await other.get('/inbox')).status).toBe(200);
    const stranger = await signOutElsewhere(new Browserless(m.org.url), 'x');
    expect(stranger.status).toBe(303);
    expect(stranger.headers.get('location')).toMatch(/^\/signin/);
    for (const ended of ['abc', '-1', '12345678', '1e3']) {
      const page = await here.get(`/account?done=sessions&ended=${ended}`);
      expect(page.status, ended).toBe(200);
      expect(page.text, ended).not.toContain('<p role="status">');
    }
    // A User-Agent longer than any browser's is kept cut, and names no browser it cannot parse.
    const long = await signedIn(`${FIREFOX} ${'x'.repeat(2_000)}`);
    const [{ longest }] = await m.org.service.database.rows<{ longest: number }>(sql`SELECT max(length(user_agent))::int AS longest FROM web_sessions`);
    expect(longest).toBe(512);
    expect(rows(section((await long.get('/account')).text))[0]).toEqual(['Firefox 140 on Windows', true]);
  });

  it(
    'passes the browser check with another browser listed',
    async () => {
      await signedIn(SAFARI_PHONE);
      const page = await chromium.signedInPage(OWNER);
      await checkPage(page, `${m.org.url}/account#signed-in`, `account-sessions-${engine}`);
      await page.getByRole('button', { name: 'Sign out everywhere else' }).click();
      await page.waitForURL((url) => url.searchParams.get('done') === 'sessions');
      await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Signed out of \d+ other sessions?\.$/);
      await expect(page.getByText('Only this browser is signed in.').isVisible()).resolves.toBe(true);
      await page.context().close();
    },
    pageChecksTimeout(1),
  );
});
