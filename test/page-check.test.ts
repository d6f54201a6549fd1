/**
 * The browser check itself (test/helpers/page-check.ts), on two pages a small HTTP server sends with the pages'
 * own kind of CSP: a sound one passes and leaves its two screenshots; a faulty one fails, naming an image without
 * a text alternative at both widths and a block too wide for a phone only at the phone's — found after the window
 * is narrowed, without the page being opened again.
 */
import { stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, launchChromium, SCREENSHOTS } from './helpers/page-check.js';

const page = (body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Check</title><link rel="stylesheet" href="/page.css"></head><body><main><h1>Check</h1>${body}</main></body></html>`;

/** What the server sends; the CSP refuses inline styles, so the wide block's width is in the stylesheet. */
const FILES: Record<string, [type: string, body: string]> = {
  '/sound': ['text/html', page('<p>Nothing wrong here.</p>')],
  '/faulty': ['text/html', page('<img src="/nothing.png" width="10" height="10"><div class="wide">A block wider than a phone.</div>')],
  '/page.css': ['text/css', '.wide { width: 600px; }'],
};

describe('the browser check', () => {
  let server: http.Server;
  let origin: string;
  let browser: Browser;
  const loads: string[] = [];

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      loads.push(request.url ?? '');
      const [type, body] = FILES[request.url ?? ''] ?? ['text/plain', 'not found'];
      response.writeHead(FILES[request.url ?? ''] ? 200 : 404, { 'content-type': `${type}; charset=utf-8`, 'content-security-policy': "default-src 'self'" });
      response.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('passes a sound page and saves a screenshot at each width', async () => {
    const tab = await browser.newPage();
    try {
      await checkPage(tab, `${origin}/sound`, 'page-check-sound');
    } finally {
      await tab.close();
    }
    for (const width of ['desktop', 'phone']) expect((await stat(path.join(SCREENSHOTS, `page-check-sound-${width}.png`))).size).toBeGreaterThan(0);
    expect(loads.filter((url) => url === '/sound')).toHaveLength(1);
  });

  it('names what is wrong with a faulty page, and at which width', async () => {
    const tab = await browser.newPage();
    const failure = await checkPage(tab, `${origin}/faulty`, 'page-check-faulty').then(
      () => new Error('the check passed'),
      (error: Error) => error,
    );
    await tab.close();
    expect(failure.message).toMatch(/^3 problem\(s\) on page-check-faulty:/);
    expect(failure.message).toMatch(/at 1280 px: axe image-alt \(critical\)/);
    expect(failure.message).toMatch(/at 390 px: axe image-alt \(critical\)/);
    expect(failure.message).toMatch(/at 390 px: the document scrolls \d+ px sideways \(sticking out: div.wide\)/);
    expect(failure.message).not.toMatch(/at 1280 px: the document scrolls/);
  });
});
