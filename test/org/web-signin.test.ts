import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { Browserless } from '../helpers/web-client.js';

describe.each(engines)('sign-in pages on %s', (engine) => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await startOrg(engine);
  });
  afterAll(() => org.close());

  it('shows a sign-in form with Email, Password and Sign in, carrying a CSRF token', async () => {
    const browser = new Browserless(org.url);
    const page = await browser.get('/signin');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<label for="email">Email</label>');
    expect(page.text).toContain('<label for="password">Password</label>');
    expect(page.text).toContain('<button type="submit">Sign in</button>');
    expect(browser.hidden(page.text, 'csrf')).toMatch(/^[\w-]{43}$/);
  });

  it('forbids framing and caching on every page', async () => {
    const page = await new Browserless(org.url).get('/signin');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');
  });

  it('signs in and returns to the same-origin path it was given', async () => {
    const browser = new Browserless(org.url);
    const response = await browser.signIn(OWNER.email, OWNER.password, '/connections?x=1');
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/connections?x=1');
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith('atrium_session='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    expect((await browser.get('/connections')).status).toBe(200);
    // Signed in already: the sign-in page sends the person on.
    const again = await browser.get('/signin?return_to=/connections');
    expect(again.status).toBe(303);
  });

  it('lands on the home page when no page sent the person to sign in', async () => {
    const browser = new Browserless(org.url);
    const response = await browser.signIn(OWNER.email, OWNER.password);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/');
    expect((await browser.get('/signin')).headers.get('location')).toBe('/');
  });

  it.each([
    ['an absolute URL', 'https://evil.example/'],
    ['a protocol-relative URL', '//evil.example/x'],
    ['a backslash trick', '/\\evil.example'],
    ['a tab trick', '/\t/evil.example'],
    ['a relative path', 'connections'],
  ])('ignores return_to as %s and goes to /', async (_name, returnTo) => {
    const response = await new Browserless(org.url).signIn(OWNER.email, OWNER.password, returnTo);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/');
  });

  const dotSegmentRedirects = ['/..//evil.example', '/.//evil.example', '/%2e%2e//evil.example', '/.%2e//evil.example'];

  it.each(dotSegmentRedirects)('never redirects a signed-in person off-site through return_to=%s', async (returnTo) => {
    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    const page = await browser.get(`/signin?return_to=${returnTo}`);
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/');
  });

  it.each(dotSegmentRedirects)('never redirects off-site after signing in with return_to=%s', async (returnTo) => {
    const response = await new Browserless(org.url).signIn(OWNER.email, OWNER.password, returnTo);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/');
  });

  it('says so when the password is wrong, and sets no session', async () => {
    const browser = new Browserless(org.url);
    const response = await browser.signIn('someone-else@example.com', 'wrong-password');
    expect(response.status).toBe(200);
    expect(response.text).toContain('The email or password is not right.');
    expect(response.headers.getSetCookie().some((line) => line.startsWith('atrium_session='))).toBe(false);
    expect((await browser.get('/connections')).status).toBe(303);
  });

  it('refuses a sign-in form without a CSRF token or with a wrong one (403, no session)', async () => {
    const browser = new Browserless(org.url);
    await browser.get('/signin');
    const missing = await browser.post('/signin', { email: OWNER.email, password: OWNER.password });
    expect(missing.status).toBe(403);
    const wrong = await browser.post('/signin', { email: OWNER.email, password: OWNER.password, csrf: 'x'.repeat(43) });
    expect(wrong.status).toBe(403);
    expect([...missing.headers.getSetCookie(), ...wrong.headers.getSetCookie()].some((line) => line.startsWith('atrium_session='))).toBe(false);
    // A token from another browser is worthless here.
    const other = new Browserless(org.url);
    const stolen = other.hidden((await other.get('/signin')).text, 'csrf');
    expect((await browser.post('/signin', { email: OWNER.email, password: OWNER.password, csrf: stolen })).status).toBe(403);
  });

  it('signs out with the CSRF token of the page, ending the session everywhere', async () => {
    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    const page = await browser.get('/connections');
    const stolenCookies = browser.cookieHeader();
    expect((await browser.post('/signout', {})).status).toBe(403);
    const out = await browser.post('/signout', { csrf: browser.hidden(page.text, 'csrf') });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/signin');
    // The old cookie no longer opens anything, even if kept.
    const replay = await fetch(`${org.url}/connections`, { headers: { cookie: stolenCookies }, redirect: 'manual' });
    expect(replay.status).toBe(303);
  });

  it('refuses a tampered session cookie', async () => {
    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    const tampered = browser.cookieHeader().replace(/atrium_session=([^;.]+)/, 'atrium_session=AAAA$1');
    const response = await fetch(`${org.url}/connections`, { headers: { cookie: tampered }, redirect: 'manual' });
    expect(response.status).toBe(303);
  });
});

describe.each(engines)('sign-in behind an https public URL on %s', (engine) => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await startOrg(engine, { config: { publicUrl: 'https://org.example', authPublicUrl: 'https://org.example' } });
  });
  afterAll(() => org.close());

  it('names the cookies with the __Host- prefix, marks them Secure with Path=/ and no Domain, and sends HSTS', async () => {
    const browser = new Browserless(org.url);
    const signInPage = await browser.get('/signin');
    const csrfCookie = signInPage.headers.getSetCookie().find((line) => line.startsWith('__Host-atrium_csrf='));
    expect(csrfCookie).toMatch(/; Secure/);
    const response = await browser.signIn(OWNER.email, OWNER.password);
    expect(response.status).toBe(303);
    const session = response.headers.getSetCookie().find((line) => line.startsWith('__Host-atrium_session='));
    expect(session).toMatch(/; Secure/);
    expect(session).toMatch(/; Path=\//);
    expect(session).not.toMatch(/Domain=/i);
    expect(response.headers.getSetCookie().some((line) => line.startsWith('atrium_session='))).toBe(false);
    expect((await browser.get('/connections')).status).toBe(200);
    expect(response.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
  });

  it('ignores a session cookie without the prefix, as a sibling subdomain could plant one', async () => {
    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    const planted = browser.cookieHeader().replace(/__Host-atrium_session=/, 'atrium_session=');
    const response = await fetch(`${org.url}/connections`, { headers: { cookie: planted }, redirect: 'manual' });
    expect(response.status).toBe(303);
  });
});
