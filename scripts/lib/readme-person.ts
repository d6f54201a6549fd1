/**
 * The person of the README's walkthrough, for the example runner: a real headless Chromium (Debian's
 * /usr/bin/chromium, as the browser tests use) that reads what a running example prints and does what a line
 * asks of the person, on the org service's pages, by their accessible names:
 *
 * | a line holding                     | the person                                                               |
 * |------------------------------------|--------------------------------------------------------------------------|
 * | a URL whose path is /oauth/authorize | opens it, signs in when asked, ticks each scope the line names, **Allow** |
 * | **Answer** and a URL ending /inbox | opens the inbox and answers the first open question                      |
 * | **Approve** and a URL ending /inbox | opens the inbox and approves the first pending decision                 |
 *
 * Every other line is only read. A step that finds nothing to do (no question, no decision, no Allow) fails.
 */
import type { Page } from 'playwright-core';
import { openBrowser, signInAs, type PersonBrowser } from '../../test/helpers/sdk-oauth.js';

/** What the person writes when an agent asks them something. */
export const PERSON_ANSWER = 'By Friday, please.';
const STEP_TIMEOUT_MS = 15_000;

export interface ReadmePerson {
  /** Does what `line` asks, if anything; resolves with what was done, or null for a line that asks nothing. */
  follow(line: string): Promise<string | null>;
  close(): Promise<void>;
}

export function readmePerson(email: string, password: string): ReadmePerson {
  let browser: Promise<PersonBrowser> | undefined;
  const page = async (): Promise<Page> => {
    browser ??= openBrowser().then((opened) => {
      opened.context.setDefaultTimeout(STEP_TIMEOUT_MS);
      return opened;
    });
    return (await browser).page;
  };

  async function allow(url: URL, words: string): Promise<string> {
    const tab = await page();
    await tab.goto(url.href);
    const signingIn = new URL(tab.url()).pathname === '/signin';
    if (signingIn) await signInAs(tab, email, password);
    await tab.getByRole('button', { name: 'Allow' }).waitFor();
    const ticked = [...words.matchAll(/\b([a-z]+:[a-z]+)\b/g)].map((match) => match[1]);
    for (const scope of ticked) await tab.getByRole('checkbox', { name: new RegExp(`^${scope}:`) }).check();
    await tab.getByRole('button', { name: 'Allow' }).click();
    // Allow sends the browser back to the application's redirect URI, off the org service.
    await tab.waitForURL((now) => now.origin !== url.origin);
    return `${signingIn ? `signed in as ${email}, ` : ''}ticked ${ticked.join(', ') || 'nothing more'}, clicked Allow`;
  }

  async function answer(url: URL): Promise<string> {
    const tab = await page();
    await tab.goto(url.href);
    const question = tab.getByRole('region', { name: /^Question on / }).first();
    const title = await question.getAttribute('aria-label');
    await question.getByLabel('Your answer').fill(PERSON_ANSWER);
    await question.getByRole('button', { name: 'Answer' }).click();
    await tab.getByRole('status').filter({ hasText: 'Answered' }).waitFor();
    return `answered "${title}" on /inbox`;
  }

  async function approve(url: URL): Promise<string> {
    const tab = await page();
    await tab.goto(url.href);
    const decision = tab.getByRole('region', { name: /^Decision / }).first();
    const title = await decision.getAttribute('aria-label');
    await decision.getByRole('button', { name: 'Approve' }).click();
    // Approving lands on the decision's page: "<capability>: approved".
    await tab.getByRole('heading', { level: 1, name: /: approved$/ }).waitFor();
    return `approved "${title}" on /inbox`;
  }

  return {
    async follow(line) {
      const found = line.match(/https?:\/\/\S+/);
      if (!found) return null;
      const url = new URL(found[0].replace(/[.,;:)]+$/, ''));
      if (url.pathname === '/oauth/authorize') return allow(url, line.replace(found[0], ''));
      if (url.pathname === '/inbox' && /\bAnswer\b/.test(line)) return answer(url);
      if (url.pathname === '/inbox' && /\bApprove\b/.test(line)) return approve(url);
      return null;
    },
    async close() {
      if (browser) await (await browser).close();
    },
  };
}
