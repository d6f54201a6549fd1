/**
 * The browser check every page test runs (DESIGN 4.6: pages work at a phone's width and are tested with
 * axe-core): a page is opened at a desktop's width (1280 × 800) and narrowed to a phone's (390 × 844); at each, axe-core
 * must find nothing `serious` or `critical` and the document must not scroll sideways, and a full-page
 * screenshot is saved as test-artifacts/screenshots/<name>-desktop.png and <name>-phone.png for a person to look at.
 */
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { AxeResults } from 'axe-core';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { engines, type Engine } from './databases.js';
import { signInAs } from './sdk-oauth.js';

const axeSource: string = createRequire(import.meta.url)('axe-core').source;

export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../test-artifacts/screenshots');

/**
 * The one database the browser checks run on: PostgreSQL when the suite has it, else the embedded one. What Chromium
 * makes of a page (axe-core, a phone's width, the screenshots) does not depend on the engine behind it, and each
 * page's server side is tested on both engines in its own file; the checks on both were a fifth of the suite's time
 * (bench/RESULTS.md, session 52). A test that only checks pages runs on it alone (`it.runIf(engine ===
 * PAGE_CHECK_ENGINE)`); a test that also does something through the page (approves, signs out, joins) runs on both.
 */
export const PAGE_CHECK_ENGINE: Engine = engines.at(-1)!;

const WIDTHS = [
  { label: 'desktop', width: 1280, height: 800 },
  { label: 'phone', width: 390, height: 844 },
] as const;

/** Debian's Chromium (DESIGN 7: never a downloaded browser), headless. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
}

/**
 * Chromium for the tests of the describe block that calls it (launched before them, closed after), and pages of a
 * new browser context each, signed in at `origin()` as a person.
 */
export function chromiumForTests(origin: () => string): { signedInPage(person: { email: string; password: string }): Promise<Page> } {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    async signedInPage(person) {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${origin()}/signin`);
      await signInAs(page, person.email, person.password);
      await page.waitForURL((url) => url.pathname !== '/signin');
      return page;
    },
  };
}

/**
 * How the page is reached: a URL, or the steps that lead to it (a page that answers a form, such as
 * "form expired"). It is reached again at each width.
 */
export type PageTarget = string | ((page: Page) => Promise<unknown>);

/**
 * The time limit of a test that checks `pages` pages. One check (two widths, two axe-core runs, two full-page
 * screenshots) takes 1–3 s on a quiet machine and 6–12 s on a loaded two-core one, where a six-page test ran out of
 * the suite's 30 s; each page gets a minute.
 */
export function pageChecksTimeout(pages: number): number {
  return pages * 60_000;
}

/**
 * Opens `target` once and checks it at both widths, and throws one error listing every problem found at either.
 * The page is reached at the desktop's width and then the window is narrowed: the pages' layout is CSS alone (their
 * one script keeps a count current), so a narrowed window lays out as one opened narrow, and a page reached by steps
 * is not reached twice. axe-core is injected once per page.
 */
export async function checkPage(page: Page, target: PageTarget, name: string): Promise<void> {
  await page.setViewportSize(WIDTHS[0]);
  if (typeof target === 'string') await page.goto(target);
  else await target(page);
  await page.waitForLoadState('load');
  const problems = await checkAtWidths(page, page, name);
  if (problems.length) throw new Error(`${problems.length} problem(s) on ${name}:\n${problems.join('\n')}`);
}

/**
 * At each width: the window resized (then `settle`), a full-page screenshot of `page` saved as <name>-<width>.png,
 * and axe-core and the sideways check run in `checked`, the page itself or a frame in it (app-host.ts). Returns
 * every problem found, each naming its width.
 */
export async function checkAtWidths(page: Page, checked: Page | Frame, name: string, settle: () => Promise<void> = async () => {}): Promise<string[]> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const problems: string[] = [];
  for (const { label, width, height } of WIDTHS) {
    await page.setViewportSize({ width, height });
    await settle();
    await screenshot(page, path.join(SCREENSHOTS, `${name}-${label}.png`));
    for (const problem of [...(await seriousViolations(checked)), ...(await sidewaysScroll(checked))]) problems.push(`${name} at ${width} px: ${problem}`);
  }
  return problems;
}

/**
 * A full-page screenshot. Headless Chromium now and then answers Page.captureScreenshot with "Unable to capture
 * screenshot" when the machine is loaded (a compositor frame not ready; seen once in CI on a page that does not
 * change). The screenshot is for a person to look at, not an assertion, so that one answer is retried a few times
 * after a frame; any other error, or the same one a fourth time, still fails the test.
 */
async function screenshot(page: Page, file: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await page.screenshot({ path: file, fullPage: true });
      return;
    } catch (error) {
      if (attempt >= 4 || !String(error).includes('Unable to capture screenshot')) throw error;
      await page.waitForTimeout(250 * attempt);
    }
  }
}

/**
 * axe-core's serious and critical findings. The pages' CSP allows scripts from their own origin only, so a
 * <script> tag with axe inline would be refused; code evaluated through the DevTools protocol
 * (page.evaluate) is not subject to the page's CSP, so axe is defined that way and the page keeps its real
 * CSP while it is checked (bypassCSP would check a page that is not the one people get).
 */
async function seriousViolations(page: Page | Frame): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  // Only violations are reported, so only they get a selector for every node (axe's resultTypes): a third less
  // time per run, and `passes` still lists every rule that passed.
  const results = await page.evaluate(() =>
    (window as unknown as { axe: { run(context: Document, options: { resultTypes: string[] }): Promise<AxeResults> } }).axe.run(document, { resultTypes: ['violations'] }),
  );
  if (results.passes.length === 0) throw new Error(`axe-core checked nothing on ${page.url()}`);
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => {
      const targets = violation.nodes.map((node) => node.target.join(' ')).join(', ');
      return `axe ${violation.id} (${violation.impact}): ${violation.help} — ${targets}`;
    });
}

/** The document must fit the window: anything wider makes a person scroll sideways to read it. */
async function sidewaysScroll(page: Page | Frame): Promise<string[]> {
  const overflow = await page.evaluate(() => {
    const viewport = document.documentElement.clientWidth;
    const scroll = document.documentElement.scrollWidth - viewport;
    // The innermost elements that stick out name the culprit.
    const outside = [...document.body.querySelectorAll('*')].filter(
      (element) => element.getBoundingClientRect().right > viewport + 0.5 && ![...element.children].some((child) => child.getBoundingClientRect().right > viewport + 0.5),
    );
    const describe = (element: Element) => `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}${element.className ? `.${String(element.className).split(' ').join('.')}` : ''}`;
    return { scroll, outside: outside.slice(0, 10).map(describe) };
  });
  return overflow.scroll > 0 ? [`the document scrolls ${overflow.scroll} px sideways (sticking out: ${overflow.outside.join(', ') || 'nothing visible'})`] : [];
}
