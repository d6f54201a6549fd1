/**
 * The home page, the MCP tools page and the layout of the org pages in a real browser: nothing wider than
 * the window on a phone (375 px) or a desktop (1280 px).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { SCOPE_NAMES } from '../../src/auth/scopes.js';
import { orgTools } from '../../src/org/mcp/server.js';
import { TOOL_PRESENTATION } from '../../src/org/mcp/presentation.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient } from '../helpers/oauth-flow.js';

describe.each(engines)('org home, tools and layout on %s', (engine) => {
  let org: TestOrg;
  let browser: Browser;
  beforeAll(async () => {
    org = await startOrg(engine);
    await connectClient(org, { clientName: 'A rather long application name that must wrap on a phone screen', scopes: [...SCOPE_NAMES] });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await org.close();
  });

  async function signedInPage(width: number): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 800 } });
    await page.goto(`${org.url}/signin`);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname !== '/signin');
    await page.goto(`${org.url}/`);
    return page;
  }

  it('leads someone not signed in to sign-in and the tools page', async () => {
    const page = await browser.newPage();
    await page.goto(`${org.url}/`);
    await expect(page.getByRole('link', { name: 'Sign in' }).getAttribute('href')).resolves.toBe('/signin');
    await expect(page.getByRole('link', { name: 'MCP tools' }).getAttribute('href')).resolves.toBe('/docs');
    await page.close();
  });

  it.each([375, 1280])('shows every org MCP tool readably on /docs at %i px: name, scope, description, schemas one click away', async (width) => {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    await page.goto(`${org.url}/docs`);
    for (const tool of orgTools) {
      const block = page.getByRole('region', { name: tool.name, exact: true });
      await expect(block.textContent()).resolves.toContain(tool.scope ?? 'any valid token');
      // The title and hints newer MCP clients show, in words.
      await expect(block.textContent()).resolves.toContain(`${TOOL_PRESENTATION[tool.name].title}. `);
      await expect(block.getByText('Input schema').count()).resolves.toBe(1);
    }
    // The schemas are closed until asked for: one click opens one.
    const first = page.getByRole('region', { name: orgTools[0].name, exact: true });
    await expect(first.locator('pre').first().isVisible()).resolves.toBe(false);
    await first.getByText('Input schema').click();
    await expect(first.locator('pre').first().textContent()).resolves.toContain('"properties"');
    // Readable: nothing wider than the window, and the page is not a narrow 6,000-pixel table.
    const layout = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      mainWidth: document.querySelector('main')!.getBoundingClientRect().width,
      tables: document.querySelectorAll('main table').length,
    }));
    expect(layout.scroll).toBe(0);
    expect(layout.tables).toBe(0);
    expect(layout.mainWidth).toBeGreaterThan(Math.min(width, 768) - 40);
    await page.screenshot({ path: `${process.env.ATRIUM_SCREENSHOTS ?? '/tmp'}/docs-${engine}-${width}.png` }).catch(() => {});
    await page.close();
  });

  it('serves a favicon the pages link to', async () => {
    const icon = await fetch(`${org.url}/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect((await fetch(`${org.url}/favicon.ico`, { redirect: 'manual' })).headers.get('location')).toBe('/favicon.svg');
  });

  it('links each stylesheet by its version, kept a year, and revalidates any other request for it', async () => {
    const html = await (await fetch(`${org.url}/signin`)).text();
    const hrefs = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((match) => match[1]);
    expect(hrefs).toEqual([expect.stringMatching(/^\/assets\/pico\.css\?v=[\w-]{22}$/), expect.stringMatching(/^\/assets\/console\.css\?v=[\w-]{22}$/)]);
    const stylesheet = readFileSync(new URL('../../src/org/web/assets/console.css', import.meta.url), 'utf8');

    const linked = await fetch(`${org.url}${hrefs[1]}`);
    expect(linked.status).toBe(200);
    expect(linked.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await linked.text()).toBe(stylesheet);
    // The version is the ETag: a page from before an upgrade names a version this one revalidates, not keeps.
    const etag = linked.headers.get('etag')!;
    expect(hrefs[1]).toContain(`?v=${etag.slice(1, -1)}`);
    for (const path of ['/assets/console.css', '/assets/console.css?v=an-earlier-version0000']) {
      const other = await fetch(`${org.url}${path}`);
      expect(other.headers.get('cache-control')).toBe('no-cache');
      expect(await other.text()).toBe(stylesheet);
      const again = await fetch(`${org.url}${path}`, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
    }
  });

  it.each([375, 1280])('fits the header and the connections table in a %i px window', async (width) => {
    const page = await signedInPage(width);
    await expect(page.getByRole('link', { name: 'Connected applications' }).count()).resolves.toBe(1);
    await page.goto(`${org.url}/connections`);
    await page.screenshot({ path: `${process.env.ATRIUM_SCREENSHOTS ?? '/tmp'}/connections-${engine}-${width}.png`, fullPage: true }).catch(() => {});
    const overflow = await page.evaluate(() => {
      const viewport = document.documentElement.clientWidth;
      const outside = [...document.querySelectorAll('header, header *, main, table, table *')].filter(
        (element) => element.getBoundingClientRect().right > viewport + 0.5,
      );
      return { scroll: document.documentElement.scrollWidth - viewport, outside: outside.map((element) => element.tagName) };
    });
    expect(overflow).toEqual({ scroll: 0, outside: [] });
    await page.close();
  });
});
