/**
 * Capabilities from the web (issue 20 item 1): an owner or admin creates one with a webhook connector whose
 * generated secret is shown once and then signs the calls, edits its risk, cost, connector and input JSON Schema
 * (checked as the file checks it), and enables and disables it; a member is refused (403); bad input is a 400 that
 * says what is wrong and writes nothing; the file's capability is "from org.yaml" and refused (409).
 */
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { MIA, pageWords as words, secretOnPage, ownerInChromium, startManageOrg, submitForm as submit, type ManageOrg } from '../helpers/manage-org.js';
import { connectOrgMcp } from '../helpers/org-mcp.js';
import { OWNER } from '../helpers/org.js';
import { checkPage, PAGE_CHECK_ENGINE, pageChecksTimeout } from '../helpers/page-check.js';
import type { Browserless } from '../helpers/web-client.js';

const SCHEMA = JSON.stringify({ type: 'object', required: ['text'], properties: { text: { type: 'string' } } });

describe.each(engines)('managing capabilities from the web on %s', (engine) => {
  let m: ManageOrg;
  let owner: Browserless;
  let member: Browserless;

  beforeAll(async () => {
    m = await startManageOrg(engine);
    [owner, member] = await Promise.all([m.signIn(OWNER), m.signIn(MIA)]);
  });
  afterAll(async () => {
    await m?.close();
  });

  const capabilityRow = async (key: string) =>
    (await m.rows<{ id: string; risk: string; cost: number; connector: any; input_schema: any; signing_secret: string | null; enabled: boolean; managed_by: string }>(
      sql`SELECT * FROM capabilities WHERE key = ${key}`,
    ))[0];
  const activity = (kind: string) => m.rows<{ person_id: string; capability_id: string; summary: string; details: any }>(sql`SELECT * FROM org_activity WHERE kind = ${kind} ORDER BY position`);

  const notify = () => ({
    key: 'notify',
    name: 'Notify the team',
    description: 'Posts to the team channel',
    risk: 'low',
    cost: '2',
    connector: 'webhook',
    webhook_url: `${m.receiver.url}/notify`,
    secret: 'generate',
    input_schema: SCHEMA,
  });

  it('offers "New capability" to owners and admins only, and refuses a member the form (403)', async () => {
    expect((await owner.get('/capabilities')).text).toContain('href="/capabilities/new"');
    expect((await member.get('/capabilities')).text).not.toContain('href="/capabilities/new"');
    expect((await member.get('/capabilities/new')).status).toBe(403);
    const refused = await submit(member, '/capabilities', '/capabilities/new', notify());
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('only owners and admins manage capabilities');
    expect(await capabilityRow('notify')).toBeUndefined();
  });

  it.each([
    ['a key that is not one', { key: 'Notify!' }, 'Key: must be lower-case letters, digits, "_" or "-" (at most 64)'],
    ['a cost that is not a number', { cost: 'free' }, 'Cost: must be a whole number of units (0 or more)'],
    ['an unknown risk', { risk: 'extreme' }, 'Risk: must be low, medium, high or critical'],
    ['a webhook without a URL', { webhook_url: '' }, 'Webhook URL: must be an http or https URL'],
    ['a content connector without an action', { connector: 'content', action: '' }, 'Content action: must be one of the content actions'],
    ['a schema that is not JSON', { input_schema: '{ type: object' }, 'Input JSON Schema: is not JSON'],
    ['a schema that is a list', { input_schema: '[1, 2]' }, 'Input JSON Schema: must be a JSON object (a JSON Schema)'],
    ['a schema ajv cannot use', { input_schema: '{"type": "nonsense"}' }, 'Input JSON Schema: is not a usable JSON Schema: schema is invalid'],
    ['a schema too large', { input_schema: JSON.stringify({ description: 'x'.repeat(70_000) }) }, 'Input JSON Schema: is longer than 65,536 characters'],
    ['the key of the file\'s capability', { key: 'filed_cap' }, 'Key: a capability with the key filed_cap exists already'],
  ])('refuses %s with 400, saying so on the form, and writes nothing', async (_name, change, message) => {
    const answer = await submit(owner, '/capabilities/new', '/capabilities/new', { ...notify(), ...change });
    expect(answer.status).toBe(400);
    expect(words(answer.text)).toContain('Nothing was saved');
    expect(words(answer.text)).toContain(message);
    expect(await capabilityRow('notify')).toBeUndefined();
    expect(await activity('capability.created')).toHaveLength(0);
  });

  it('creates a webhook capability with a generated secret shown once, and signs its calls with that secret', async () => {
    const answer = await submit(owner, '/capabilities/new', '/capabilities/new', notify());
    expect(answer.status).toBe(200);
    expect(words(answer.text)).toContain('Copy it now: it will not be shown again.');
    const shown = secretOnPage(answer.text)!;
    const row = await capabilityRow('notify');
    expect(row).toMatchObject({ risk: 'low', cost: 2, enabled: true, managed_by: 'console', signing_secret: shown, input_schema: JSON.parse(SCHEMA) });
    expect(row.connector).toEqual({ kind: 'webhook', url: `${m.receiver.url}/notify` });
    const [created] = await activity('capability.created');
    expect(created).toMatchObject({ person_id: m.ids.owner, capability_id: row.id, summary: 'created the capability notify (risk low)' });
    expect(JSON.stringify(created.details)).not.toContain('whsec_');
    expect((await owner.get(`/capabilities/${row.id}/edit`)).text).not.toContain(shown);

    const mcp = await connectOrgMcp(m.org, { clientName: 'Owner laptop' });
    try {
      const refused = await mcp.callError('execute_capability', { capability_id: row.id, input: { text: 7 }, space_id: m.ids.general });
      expect(refused.message).toContain('input.text: must be string');
      const ran = await mcp.callOk('execute_capability', { capability_id: row.id, input: { text: 'deploy done' }, space_id: m.ids.general, wait_seconds: 10 });
      expect(ran.status).toBe('succeeded');
    } finally {
      await mcp.close();
    }
    const call = m.receiver.calls.find((entry) => entry.path === '/notify')!;
    const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(call.headers[name])]));
    expect(new Webhook(shown).verify(call.body, headers)).toMatchObject({ type: 'capability', input: { text: 'deploy done' } });
  });

  it('edits risk, cost and input schema (the key fixed), logging the fields changed; switches to a content action', async () => {
    const row = await capabilityRow('notify');
    const edit = `/capabilities/${row.id}/edit`;
    const form = { ...notify(), key: 'other', risk: 'high', cost: '5', secret: 'keep', input_schema: '' };
    const answer = await submit(owner, edit, edit, form);
    expect(answer.status).toBe(303);
    expect(await capabilityRow('notify')).toMatchObject({ risk: 'high', cost: 5, input_schema: null, signing_secret: row.signing_secret });
    expect(await capabilityRow('other')).toBeUndefined();
    const [updated] = await activity('capability.updated');
    expect(updated.details).toEqual({ changed: { risk: 'high', cost: 5, input_schema: 'removed' } });

    const bad = await submit(owner, edit, edit, { ...form, input_schema: '{"type": 3}' });
    expect(bad.status).toBe(400);
    expect(words(bad.text)).toContain('Input JSON Schema: is not a usable JSON Schema');

    const content = await submit(owner, edit, edit, { ...form, connector: 'content', action: 'publish_blog_post' });
    expect(content.status).toBe(303);
    expect(await capabilityRow('notify')).toMatchObject({ connector: { kind: 'content', action: 'publish_blog_post' }, signing_secret: null });
    expect((await activity('capability.updated')).at(-1)!.details).toEqual({ changed: { connector: { kind: 'content', action: 'publish_blog_post' } } });
  });

  it('disables and enables it', async () => {
    const row = await capabilityRow('notify');
    const status = (value: string) => submit(owner, `/capabilities/${row.id}`, `/capabilities/${row.id}/status`, { status: value });
    expect((await status('disabled')).status).toBe(303);
    expect((await capabilityRow('notify')).enabled).toBe(false);
    expect((await status('enabled')).status).toBe(303);
    expect((await capabilityRow('notify')).enabled).toBe(true);
    expect((await activity('capability.updated')).slice(-2).map((entry) => entry.summary)).toEqual(['disabled the capability notify', 'enabled the capability notify']);
  });

  it('checks the next execute_capability against the input schema as just edited (no process keeps the old one)', async () => {
    const relay = { ...notify(), key: 'relay', webhook_url: `${m.receiver.url}/relay` };
    expect((await submit(owner, '/capabilities/new', '/capabilities/new', relay)).status).toBe(200);
    const row = await capabilityRow('relay');
    const mcp = await connectOrgMcp(m.org, { clientName: 'Owner laptop' });
    try {
      // Refused before anything starts: the call reads the capability (and keeps it) only to check the input.
      const call = { capability_id: row.id, input: { text: 7 }, space_id: m.ids.general };
      expect((await mcp.callError('execute_capability', call)).message).toContain('input.text: must be string');
      const edit = `/capabilities/${row.id}/edit`;
      const schema = JSON.stringify({ type: 'object', required: ['channel'], properties: { channel: { type: 'string' } } });
      expect((await submit(owner, edit, edit, { ...relay, secret: 'keep', input_schema: schema })).status).toBe(303);
      expect((await mcp.callError('execute_capability', call)).message).toContain('input.channel: is required');
    } finally {
      await mcp.close();
    }
  });

  it('marks the file\'s capability "from org.yaml", offers no edit, and refuses its edits (409) naming the file', async () => {
    const page = await owner.get(`/capabilities/${m.ids.filedCap}`);
    expect(page.text).toContain('from org.yaml');
    expect(page.text).not.toContain(`/capabilities/${m.ids.filedCap}/edit`);
    expect((await owner.get(`/capabilities/${m.ids.filedCap}/edit`)).status).toBe(409);
    const before = await capabilityRow('filed_cap');
    const edit = await submit(owner, '/capabilities', `/capabilities/${m.ids.filedCap}/edit`, { ...notify(), risk: 'critical' });
    expect(edit.status).toBe(409);
    expect(words(edit.text)).toContain('the capability filed_cap is managed by org.yaml');
    expect((await submit(owner, '/capabilities', `/capabilities/${m.ids.filedCap}/status`, { status: 'disabled' })).status).toBe(409);
    expect(await capabilityRow('filed_cap')).toEqual(before);
  });

  describe.runIf(engine === PAGE_CHECK_ENGINE)('in Chromium', () => {
    const chromium = ownerInChromium(() => m.org.url);

    it('passes the browser check: the new-capability form, its problems, the secret shown once, the edit form', async () => {
      const page = await chromium.context().newPage();
      const notifyRow = await capabilityRow('notify');
      await checkPage(page, `${m.org.url}/capabilities/new`, 'capability-new');
      await checkPage(
        page,
        async (tab) => {
          await tab.goto(`${m.org.url}/capabilities/new`);
          await tab.getByLabel('Key').fill('schema-check');
          await tab.getByLabel('Name', { exact: true }).fill('Schema check');
          await tab.getByLabel('Webhook URL').fill(`${m.receiver.url}/check`);
          await tab.getByLabel('Input JSON Schema (optional)').fill('{"type": "nonsense"}');
          await tab.getByRole('button', { name: 'Create capability' }).click();
          await tab.getByText('Nothing was saved').waitFor();
        },
        'capability-new-problems',
      );
      let made = 0;
      await checkPage(
        page,
        async (tab) => {
          await tab.goto(`${m.org.url}/capabilities/new`);
          await tab.getByLabel('Key').fill(`browser-${++made}`);
          await tab.getByLabel('Name', { exact: true }).fill('Browser capability');
          await tab.getByLabel('Webhook URL').fill(`${m.receiver.url}/browser`);
          await tab.getByRole('button', { name: 'Create capability' }).click();
          await tab.getByText('it will not be shown again').waitFor();
        },
        'capability-secret-once',
      );
      await checkPage(page, `${m.org.url}/capabilities/${notifyRow.id}/edit`, 'capability-edit');
      await checkPage(page, `${m.org.url}/capabilities/${notifyRow.id}`, 'capability-manage');
      await page.close();
    }, pageChecksTimeout(5));
  });
});
