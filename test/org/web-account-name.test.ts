/**
 * A person changes their own name on /account: everyone and every process reads the new one at once (the MCP
 * service_context, the header), the activity log records the change, records made before keep the name they were
 * made with, and a name that is empty, too long or carries control or bidirectional characters is refused. A person
 * the organization file declares is named there.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { signedInBrowserless, type Browserless } from '../helpers/web-client.js';

const FILED = { email: 'filed@example.com', password: 'filed-password-1', name: 'Filed Person' } as const;

describe.each(engines)('changing one’s name on /account on %s', (engine) => {
  let org: TestOrg;
  let owner: Browserless;
  let filed: Browserless;
  let client: OrgMcp;
  beforeAll(async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-name-'));
    const orgFile = path.join(dir, 'org.yaml');
    await writeFile(orgFile, `people:\n  - { email: ${FILED.email}, name: ${FILED.name}, role: member, password_env: NAME_TEST_FILED_PASSWORD }\nspaces:\n  - { key: general, name: General, members: [${OWNER.email}] }\n`);
    process.env.NAME_TEST_FILED_PASSWORD = FILED.password;
    org = await startOrg(engine, { config: { orgFile } });
    [owner, filed] = await Promise.all([signedInBrowserless(org.url, OWNER), signedInBrowserless(org.url, FILED)]);
    client = await connectOrgMcp(org, { clientName: 'Owner laptop', scopes: ['memory:write'] });
  });
  afterAll(async () => {
    await client?.close();
    await org?.close();
  });

  const rows = <T extends Record<string, unknown>>(query: ReturnType<typeof sql>) => org.service.database.rows<T>(query);
  const ownerName = async () => (await rows<{ name: string }>(sql`SELECT name FROM people WHERE email = ${OWNER.email}`))[0].name;

  async function rename(browser: Browserless, name: string) {
    const page = await browser.get('/account');
    return browser.post('/account/name', { csrf: browser.hidden(page.text, 'csrf'), name });
  }

  it('changes the name everyone reads, at once, and records it', async () => {
    const before = await client.callOk('service_context');
    expect(before.person.name).toBe('Owner');
    const [space] = before.spaces as { id: string }[];
    const item = await client.callOk('record_memory', { kind: 'fact', title: 'Named before', body: 'Recorded under the old name.', space_id: space.id });

    const answer = await rename(owner, '  Ada Lovelace ');
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/account?done=name');
    const page = await owner.get('/account?done=name');
    expect(page.text).toContain('Saved: people and agents now see you as Ada Lovelace.');
    expect(page.text).toContain('value="Ada Lovelace"');
    expect(await ownerName()).toBe('Ada Lovelace');
    // service_context is answered from memory; the change feed drops it when the name commits.
    expect((await client.callOk('service_context')).person.name).toBe('Ada Lovelace');
    expect((await owner.get('/')).text).toContain('Hello, Ada Lovelace');

    const entries = await rows<{ summary: string; details: unknown }>(sql`SELECT summary, details FROM org_activity WHERE kind = 'person.renamed'`);
    expect(entries).toEqual([{ summary: 'changed their name from “Owner” to “Ada Lovelace”', details: { from: 'Owner', to: 'Ada Lovelace' } }]);
    // What was recorded before keeps the name it was recorded with.
    expect((await rows<{ recorded_by_name: string }>(sql`SELECT recorded_by_name FROM memory_items WHERE id = ${item.id}`))[0].recorded_by_name).toBe('Owner');

    // The same name again changes nothing, records nothing, and says so.
    const same = await rename(owner, 'Ada Lovelace');
    expect(same.status).toBe(303);
    expect(same.headers.get('location')).toBe('/account?done=name_kept');
    const kept = await owner.get('/account?done=name_kept');
    expect(kept.text).toContain('<p role="status">Nothing to change: that is already your name.</p>');
    expect(kept.text).not.toContain('Saved: people and agents');
    expect(await rows(sql`SELECT 1 FROM org_activity WHERE kind = 'person.renamed'`)).toHaveLength(1);
  });

  it.each([
    ['empty', '   ', 'The name must not be empty.'],
    ['too long', 'x'.repeat(201), 'The name must be at most 200 characters.'],
    ['on two lines', 'Ada\nLovelace', 'The name must be one line, without control characters.'],
    ['with a right-to-left override', 'Ada \u202Enimda', 'The name must be one line, without control characters.'],
    ['with a NUL', 'Ada\u0000', 'The name must not contain a NUL character.'],
  ])('refuses a name %s, changing nothing', async (_case, name, message) => {
    const before = await ownerName();
    const answer = await rename(owner, name);
    expect(answer.status).toBe(400);
    expect(answer.text).toContain(`<p class="error" role="alert" id="name-error">${message}</p>`);
    expect(await ownerName()).toBe(before);
  });

  it('leaves the name of a person the organization file declares to the file', async () => {
    const page = await filed.get('/account');
    expect(page.text).toContain('Your name is set in org.yaml, the organization file: it is changed there.');
    expect(page.text).not.toContain('action="/account/name"');
    const answer = await filed.post('/account/name', { csrf: filed.hidden(page.text, 'csrf'), name: 'Not From File' });
    expect(answer.status).toBe(409);
    expect((await rows<{ name: string }>(sql`SELECT name FROM people WHERE email = ${FILED.email}`))[0].name).toBe(FILED.name);
  });

  it('refuses the form without its CSRF token, and sends someone signed out to sign in', async () => {
    const before = await ownerName();
    expect((await owner.post('/account/name', { name: 'Forged Name' })).status).toBe(403);
    const signedOut = await fetch(`${org.url}/account/name`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Anon',
      redirect: 'manual',
    });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe('/signin?return_to=%2Faccount');
    expect(await ownerName()).toBe(before);
  });
});
