/**
 * An address the org service does not serve: a person's browser gets a page that says so and leads home, with the
 * pages' own headers; an API client and a form post keep the catalogued JSON error. A page refused for its record
 * says what happened in its heading.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { checkPage, launchChromium, pageChecksTimeout } from '../helpers/page-check.js';
import { signedInBrowserless } from '../helpers/web-client.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe.each(engines)('an address the org service does not serve, on %s', (engine) => {
  let org: TestOrg;
  let browser: Browser;
  beforeAll(async () => {
    org = await startOrg(engine);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await org?.close();
  });

  it('shows a browser a page that leads home, framed by nobody', async () => {
    const answer = await fetch(`${org.url}/spaces?from=old-link`, { headers: { accept: BROWSER_ACCEPT } });
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(answer.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(answer.headers.get('x-frame-options')).toBe('DENY');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    const html = await answer.text();
    expect(html).toContain('<h1>Page not found</h1>');
    expect(html).toContain('<a href="/">Go to the home page</a>');
    expect(html).not.toContain('old-link');
  });

  it('keeps the JSON error for an API client and for a form post', async () => {
    for (const [method, accept] of [
      ['GET', 'application/json'],
      ['GET', '*/*'],
      ['POST', BROWSER_ACCEPT],
    ] as const) {
      const answer = await fetch(`${org.url}/spaces`, { method, headers: { accept } });
      expect(answer.status, `${method} ${accept}`).toBe(404);
      expect(await answer.json()).toEqual({ error: { code: 'not_found', message: `no route for ${method} /spaces` } });
    }
  });

  it('heads a refused page by what happened, with the reason and the way home', async () => {
    const owner = await signedInBrowserless(org.url, OWNER);
    const page = await owner.get('/memory/mem_nosuchitem');
    expect(page.status).toBe(404);
    expect(page.text).toContain('<h1>Not found</h1><p>memory item not found</p><p><a href="/">Go to the home page</a></p>');
  });

  it('passes the browser check', { timeout: pageChecksTimeout(1) }, async () => {
    const page = await browser.newPage();
    await checkPage(page, `${org.url}/no/such/page`, engine === 'pglite' ? 'page-not-found' : `page-not-found-${engine}`);
    await page.close();
  });
});
