/**
 * An organization for the console's management forms: the owner (made by the first start, so a console record),
 * Mia (a member) and Ada (an admin) declared in the file, a space `general`, the file's agent `filed` and capability
 * `filed_cap` (both "from org.yaml"), connected clients at autonomy 2 (they run low-risk capabilities alone), and a
 * webhook receiver that records what it is sent.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { Engine } from './databases.js';
import { OWNER, startOrg, type TestOrg } from './org.js';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from './page-check.js';
import { signInAs } from './sdk-oauth.js';
import { signedInBrowserless, type Browserless } from './web-client.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

export const MIA = { email: 'mia@example.com', password: 'mia-password-123', name: 'Mia Member' } as const;
export const ADA = { email: 'ada@example.com', password: 'ada-password-123', name: 'Ada Admin' } as const;

export interface ManageOrg {
  org: TestOrg;
  receiver: WebhookReceiver;
  ids: { filed: string; filedCap: string; general: string; owner: string; mia: string };
  signIn(person: { email: string; password: string }): Promise<Browserless>;
  /** Rows of a query against the org database. */
  rows<Row extends Record<string, unknown>>(query: ReturnType<typeof sql>): Promise<Row[]>;
  close(): Promise<void>;
}

export async function startManageOrg(engine: Engine): Promise<ManageOrg> {
  const receiver = await startWebhookReceiver();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-manage-'));
  const orgFile = path.join(dir, 'org.yaml');
  await writeFile(
    orgFile,
    `organization: { name: Manage Co, client_autonomy: 2 }
people:
  - { email: ${MIA.email}, name: ${MIA.name}, role: member, password_env: MANAGE_MIA_PASSWORD }
  - { email: ${ADA.email}, name: ${ADA.name}, role: admin, password_env: MANAGE_ADA_PASSWORD }
spaces:
  - { key: general, name: General, members: [${OWNER.email}, ${MIA.email}] }
agents:
  - { key: filed, name: Filed Agent, responsible: ${OWNER.email}, delivery: { kind: webhook, url: "${receiver.url}/filed", secret_env: MANAGE_FILED_SECRET } }
capabilities:
  - { key: filed_cap, name: Filed capability, risk: low, connector: { kind: webhook, url: "${receiver.url}/filed-cap" } }
`,
  );
  process.env.MANAGE_MIA_PASSWORD = MIA.password;
  process.env.MANAGE_ADA_PASSWORD = ADA.password;
  const org = await startOrg(engine, { config: { orgFile } });
  const rows = <Row extends Record<string, unknown>>(query: ReturnType<typeof sql>) => org.service.database.rows<Row>(query);
  const [filed] = await rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'filed'`);
  const [filedCap] = await rows<{ id: string }>(sql`SELECT id FROM capabilities WHERE key = 'filed_cap'`);
  const [general] = await rows<{ id: string }>(sql`SELECT id FROM spaces WHERE key = 'general'`);
  const [owner] = await rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${OWNER.email}`);
  const [mia] = await rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${MIA.email}`);
  return {
    org,
    receiver,
    ids: { filed: filed.id, filedCap: filedCap.id, general: general.id, owner: owner.id, mia: mia.id },
    rows,
    signIn: (person) => signedInBrowserless(org.url, person),
    async close() {
      await org.close();
      await receiver.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Posts a form to `action` with the CSRF token of the page at `formPath`, as a browser submits it. */
export async function submitForm(browser: Browserless, formPath: string, action: string, form: Record<string, string>) {
  const page = await browser.get(formPath);
  return browser.post(action, { csrf: browser.hidden(page.text, 'csrf'), ...form });
}

/** The text of a page without its markup, entities decoded, as people read it. */
export function pageWords(html: string): string {
  return html.replace(/<[^>]+>/g, ' ').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&').replace(/\s+/g, ' ');
}

/** A `whsec_` secret shown on the page, if any. */
export function secretOnPage(html: string): string | undefined {
  return /whsec_[A-Za-z0-9+/=]+/.exec(html)?.[0];
}

/**
 * Chromium signed in as the owner, for the browser checks of the enclosing `describe` (started before its tests,
 * closed after them); `context()` is the signed-in browser context.
 */
export function ownerInChromium(origin: () => string): { context(): BrowserContext } {
  let browser: Browser | undefined;
  let context: BrowserContext;
  beforeAll(async () => {
    browser = await launchChromium();
    context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${origin()}/signin`);
    await signInAs(page, OWNER.email, OWNER.password);
    await page.waitForURL(`${origin()}/`);
    await page.close();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return { context: () => context };
}
