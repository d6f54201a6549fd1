/**
 * An organization for the console's management tests (issue 20 item 1): the owner, two spaces (`general`, `ops`), a
 * low-risk webhook capability `notify_team` that clients run at once (client autonomy 2), and one rule from the
 * organization file. People the tests manage join the real way: the owner invites them on /people and they open
 * the link and choose a password.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import type { Engine } from './databases.js';
import { OWNER, startOrg, type TestOrg } from './org.js';
import { Browserless, type PageResponse } from './web-client.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

export interface Invitee {
  email: string;
  name: string;
  role?: 'owner' | 'admin' | 'member';
  spaceIds?: string[];
}

export interface ManageOrg {
  org: TestOrg;
  receiver: WebhookReceiver;
  spaces: { general: string; ops: string };
  capabilityId: string;
  /** The owner, signed in. */
  owner: Browserless;
  /** Posts the invitation form as `by`; the link when it was made (201). */
  invite(by: Browserless, invitee: Invitee): Promise<PageResponse & { link?: string }>;
  /** Joins through the link in a new browser with `password`: that browser, signed in when it worked. */
  join(link: string, password: string): Promise<{ browser: Browserless; answer: PageResponse }>;
  /** Invites and joins: the new person's id and signed-in browser. */
  addPerson(invitee: Invitee): Promise<{ id: string; browser: Browserless; password: string }>;
  /** Activity entries of a kind, oldest first. */
  activity(kind: string): Promise<Array<{ person_id: string | null; subject: string | null; summary: string; details: any }>>;
  close(): Promise<void>;
}

export async function startManageOrg(engine: Engine): Promise<ManageOrg> {
  const receiver = await startWebhookReceiver();
  process.env.MANAGE_HOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-manage-'));
  const orgFile = path.join(dir, 'org.yaml');
  await writeFile(
    orgFile,
    `organization: { name: Manage Co, client_autonomy: 2 }
spaces:
  - { key: general, name: General, members: [${OWNER.email}] }
  - { key: ops, name: Operations, members: [${OWNER.email}] }
capabilities:
  - key: notify_team
    name: Notify the team
    risk: low
    connector: { kind: webhook, url: ${receiver.url}/notify, secret_env: MANAGE_HOOK_SECRET }
rules:
  - { name: File rule, when: { capability: notify_team, input: { path: /text, op: eq, value: never-sent } }, then: deny }
`,
  );
  const org = await startOrg(engine, { config: { orgFile } });
  const db = org.service.database;
  const spaceRows = await db.rows<{ id: string; key: string }>(sql`SELECT id, key FROM spaces`);
  const spaces = Object.fromEntries(spaceRows.map((row) => [row.key, row.id])) as ManageOrg['spaces'];
  // The spaces the tests manage are the console's, whatever `org apply` marks; a test that needs a file record marks it.
  await db.rows(sql`UPDATE spaces SET managed_by = 'console'`);
  const [capability] = await db.rows<{ id: string }>(sql`SELECT id FROM capabilities WHERE key = 'notify_team'`);
  const owner = new Browserless(org.url);
  expect((await owner.signIn(OWNER.email, OWNER.password)).status).toBe(303);

  const invite: ManageOrg['invite'] = async (by, invitee) => {
    const people = await by.get('/people');
    const answer = await by.post('/people/invite', {
      csrf: by.hidden(people.text, 'csrf'),
      email: invitee.email,
      name: invitee.name,
      role: invitee.role ?? 'member',
      space_ids: invitee.spaceIds ?? [],
    });
    const link = /<code id="invitation-link">([^<]+)<\/code>/.exec(answer.text)?.[1];
    return { ...answer, link };
  };
  const join: ManageOrg['join'] = async (link, password) => {
    const browser = new Browserless(org.url);
    // The sign-in page's token is this browser's too (bound to its pre-session cookie), so a link that no longer
    // shows a form is still posted to, as by someone who opened it before it was used up.
    const signIn = await browser.get('/signin');
    const answer = await browser.post(new URL(link).pathname, { csrf: browser.hidden(signIn.text, 'csrf'), password });
    return { browser, answer };
  };
  return {
    org,
    receiver,
    spaces,
    capabilityId: capability.id,
    owner,
    invite,
    join,
    async addPerson(invitee) {
      const { link } = await invite(owner, invitee);
      if (!link) throw new Error(`no invitation link for ${invitee.email}`);
      const password = `${invitee.name.toLowerCase().replace(/\W/g, '')}-password-1`;
      const { browser, answer } = await join(link, password);
      expect(answer.status).toBe(303);
      const [row] = await db.rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${invitee.email}`);
      return { id: row.id, browser, password };
    },
    activity: (kind) => db.rows(sql`SELECT person_id, subject, summary, details FROM org_activity WHERE kind = ${kind} ORDER BY seq`),
    async close() {
      await org.close();
      await receiver.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The CSRF token of a signed-in person's forms, from any of their pages. */
export async function csrfOf(browser: Browserless): Promise<string> {
  return browser.hidden((await browser.get('/people')).text, 'csrf');
}
