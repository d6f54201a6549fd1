/**
 * The content reference as a person reads it in Chromium: Atrium's name and logo instead of the framework's,
 * the 19 content MCP tools beside the REST reference, and no Content-Security-Policy violation or other error
 * in the browser console.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentTools } from '../../src/content/mcp/server.js';
import { startContent, type TestContent } from '../helpers/content.js';

describe('the content /docs page in a browser', () => {
  let content: TestContent;
  let browser: Browser;

  beforeAll(async () => {
    content = await startContent('pglite');
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  });
  afterAll(async () => {
    await browser?.close();
    await content?.close();
  });

  it('carries Atrium\'s name, lists the 19 MCP tools beside the REST reference, and raises no CSP or console error', { timeout: 60_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || /content security policy/i.test(message.text())) problems.push(`${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
    });
    await page.goto(`${content.url}/docs`, { waitUntil: 'networkidle' });
    await page.getByText('Atrium content API').first().waitFor();

    expect(await page.title()).toBe('Atrium content API');
    // The framework's logo is replaced by Atrium's.
    const logo = page.locator('.topbar img');
    await expect.poll(() => logo.getAttribute('alt')).toBe('Atrium');
    expect(await logo.getAttribute('src')).not.toContain('swagger');

    expect(contentTools).toHaveLength(19);
    const tools = page.locator('.information-container');
    await tools.getByText('Content MCP tools (19)').waitFor();
    for (const tool of contentTools) await expect.poll(() => tools.getByText(tool.name, { exact: true }).count()).toBe(1);
    await tools.getByText('Create a changelog entry for a version of the form v<major>.<minor>.<patch> (one entry per version).').waitFor();
    // The REST reference is still there.
    await page.getByText('/blog/{slug}', { exact: true }).first().waitFor();

    const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-docs-'));
    await page.screenshot({ path: path.join(dir, 'content-docs-1280.png'), fullPage: false });
    expect(problems).toEqual([]);
    await page.close();
  });
});
