/**
 * The Connect a client page (issue 18, item 1) in a real browser: linked from the home page for everyone,
 * the set-up of each client with this service's URLs, nothing wider than a phone; and README.md's "Connect a
 * client" carries the very same snippets for the default URLs.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { contentSetUps, orgSetUps, type ClientSetUp } from '../../src/org/web/connect.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';

const CLIENTS = ['Claude Code', 'Claude Desktop', 'Cursor', 'VS Code', 'MCP Inspector', 'TypeScript SDK', 'Python SDK'];
const screenshots = process.env.ATRIUM_SCREENSHOTS ?? '/tmp';

describe('README "Connect a client"', () => {
  const fenced = (setUp: ClientSetUp) => `\`\`\`${setUp.language}\n${setUp.code}\n\`\`\``;

  it.each([
    ['organization', orgSetUps('http://localhost:8080/mcp')],
    ['content', contentSetUps('http://localhost:8081/mcp')],
  ])('shows every client set-up of the %s MCP server exactly as the page does for the default URLs', async (_name, setUps) => {
    const readme = await readFile('README.md', 'utf8');
    expect(setUps.map((setUp) => setUp.client)).toEqual(CLIENTS);
    for (const setUp of setUps) expect(readme, setUp.client).toContain(fenced(setUp));
  });
});

describe('mcp-remote set-up', () => {
  it('adds --allow-http only for a plain http URL that is not this machine', () => {
    const desktop = (url: string) => orgSetUps(url).find((setUp) => setUp.client === 'Claude Desktop')!.code;
    expect(desktop('http://org.internal:8080/mcp')).toContain('"args": ["-y", "mcp-remote", "http://org.internal:8080/mcp", "--allow-http"]');
    expect(desktop('https://org.example.com/mcp')).toContain('"args": ["-y", "mcp-remote", "https://org.example.com/mcp"]');
    expect(desktop('http://localhost:8080/mcp')).not.toContain('--allow-http');
  });
});

describe.each(engines)('the Connect a client page on %s', (engine) => {
  let org: TestOrg;
  let browser: Browser;
  beforeAll(async () => {
    org = await startOrg(engine, { config: { content: { url: 'http://content.example.test:8081' } } });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await org?.close();
  });

  async function overflow(page: Page) {
    return page.evaluate(() => {
      const viewport = document.documentElement.clientWidth;
      const outside = [...document.querySelectorAll('header, header *, main, main *')].filter((element) => element.getBoundingClientRect().right > viewport + 0.5);
      return { scroll: document.documentElement.scrollWidth - viewport, outside: outside.map((element) => element.tagName) };
    });
  }

  it('is linked from the home page before signing in', async () => {
    const page = await browser.newPage();
    await page.goto(`${org.url}/`);
    await page.getByRole('link', { name: 'Connect a client' }).click();
    await page.waitForURL(`${org.url}/connect`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Connect a client');
    await page.close();
  });

  it.each([375, 1280])('gives each client its set-up with this service’s URLs, in a %i px window', async (width) => {
    const page = await browser.newPage({ viewport: { width, height: 800 } });
    await page.goto(`${org.url}/signin`);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${org.url}/`);
    // The signed-in home links it too.
    await page.getByRole('link', { name: 'Connect a client' }).click();
    await page.waitForURL(`${org.url}/connect`);

    const orgUrl = `${org.url}/mcp`;
    const contentUrl = 'http://content.example.test:8081/mcp';
    for (const [section, url, setUps] of [
      ['Organization MCP server', orgUrl, orgSetUps(orgUrl)],
      ['Content MCP server', contentUrl, contentSetUps(contentUrl)],
    ] as const) {
      await expect(page.getByRole('heading', { level: 2, name: section }).count()).resolves.toBe(1);
      for (const setUp of setUps) {
        const region = page.getByRole('region', { name: setUp.client }).filter({ hasText: url });
        await expect(region.count(), `${section}: ${setUp.client}`).resolves.toBe(1);
        await expect(region.locator('pre code').textContent()).resolves.toBe(setUp.code);
      }
    }
    await expect(page.getByText('Node.js 22.19 or newer').count()).resolves.toBe(2);
    await page.screenshot({ path: `${screenshots}/connect-${engine}-${width}.png`, fullPage: true }).catch(() => {});
    expect(await overflow(page)).toEqual({ scroll: 0, outside: [] });
    await page.close();
  });

  it('leaves the content section out when no content service is configured', async () => {
    const bare = await startOrg(engine);
    try {
      const page = await browser.newPage();
      await page.goto(`${bare.url}/connect`);
      await expect(page.getByRole('heading', { level: 2 }).allTextContents()).resolves.toEqual(['Organization MCP server']);
      await page.close();
    } finally {
      await bare.close();
    }
  });
});
