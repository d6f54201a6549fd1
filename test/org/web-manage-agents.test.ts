/**
 * Agents from the web (issue 20 item 1): an owner or admin creates a declared agent, edits it, enables and disables
 * it; a generated signing secret is shown once and then signs the agent's deliveries; a member is refused (403);
 * bad input is a 400 that says what is wrong and writes nothing; an agent the file declares is "from org.yaml" and
 * refused (409) naming the file; every change is in the activity log with who made it, never with the secret.
 */
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordClientAgent } from '../../src/org/agents/records.js';
import { engines } from '../helpers/databases.js';
import { ADA, MIA, pageWords as words, secretOnPage, ownerInChromium, startManageOrg, submitForm as submit, type ManageOrg } from '../helpers/manage-org.js';
import { connectOrgMcp } from '../helpers/org-mcp.js';
import { OWNER } from '../helpers/org.js';
import { checkPage, PAGE_CHECK_ENGINE, pageChecksTimeout } from '../helpers/page-check.js';
import type { Browserless } from '../helpers/web-client.js';

describe.each(engines)('managing agents from the web on %s', (engine) => {
  let m: ManageOrg;
  let owner: Browserless;
  let admin: Browserless;
  let member: Browserless;

  beforeAll(async () => {
    m = await startManageOrg(engine);
    [owner, admin, member] = await Promise.all([m.signIn(OWNER), m.signIn(ADA), m.signIn(MIA)]);
  });
  afterAll(async () => {
    await m?.close();
  });

  const agentRow = async (key: string) =>
    (await m.rows<{ id: string; name: string; autonomy: number; budget: number | null; delivery: any; signing_secret: string | null; status: string; managed_by: string; responsible_person_id: string | null }>(
      sql`SELECT * FROM agents WHERE key = ${key}`,
    ))[0];
  const activity = (kind: string) => m.rows<{ person_id: string; agent_id: string; summary: string; details: any }>(sql`SELECT * FROM org_activity WHERE kind = ${kind} ORDER BY position`);

  const scout = {
    key: 'scout',
    name: 'Scout',
    description: 'Looks around',
    autonomy: '2',
    budget: '40',
    secret: 'generate',
  };

  it('offers "New agent" to owners and admins, not to a member, and refuses a member the form (403)', async () => {
    expect((await owner.get('/agents')).text).toContain('href="/agents/new"');
    expect((await admin.get('/agents')).text).toContain('href="/agents/new"');
    const list = await member.get('/agents');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain('href="/agents/new"');
    expect((await member.get('/agents/new')).status).toBe(403);
    const agentsPage = await member.get('/agents');
    const refused = await member.post('/agents/new', { csrf: member.hidden(agentsPage.text, 'csrf'), ...scout, responsible: '', delivery_url: `${m.receiver.url}/scout` });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('only owners and admins manage agents');
    expect(await agentRow('scout')).toBeUndefined();
    const memberPage = await member.get(`/agents/${m.ids.filed}`);
    expect(memberPage.text).not.toContain('/status');
  });

  it('refuses bad input with 400, says what is wrong on the form, keeps what was typed, and writes nothing', async () => {
    const before = (await activity('agent.created')).length;
    const answer = await submit(owner, '/agents/new', '/agents/new', { ...scout, key: 'Not A Key', budget: 'lots', delivery_url: 'ftp://example.com/x', responsible: '' });
    expect(answer.status).toBe(400);
    const text = words(answer.text);
    expect(text).toContain('Nothing was saved');
    expect(text).toContain('Key: must be lower-case letters, digits, "_" or "-" (at most 64)');
    expect(text).toContain('Monthly budget: must be a whole number of units, or empty for no budget');
    expect(text).toContain('Delivery URL: must be an http or https URL, or empty when the agent polls');
    expect(answer.text).toContain('value="Not A Key"');
    const noVariable = await submit(owner, '/agents/new', '/agents/new', { ...scout, secret: 'env', secret_env: '', delivery_url: `${m.receiver.url}/scout`, responsible: '' });
    expect(noVariable.status).toBe(400);
    expect(words(noVariable.text)).toContain('Environment variable: name the environment variable that holds the signing secret');
    const taken = await submit(owner, '/agents/new', '/agents/new', { ...scout, key: 'filed', responsible: '', delivery_url: '' });
    expect(taken.status).toBe(400);
    expect(words(taken.text)).toContain('Key: an agent with the key filed exists already');
    const nobody = await submit(owner, '/agents/new', '/agents/new', { ...scout, responsible: 'per_nobody', delivery_url: '' });
    expect(nobody.status).toBe(400);
    expect(words(nobody.text)).toContain('Responsible person: is not a person of the organization');
    expect(await agentRow('scout')).toBeUndefined();
    expect(await activity('agent.created')).toHaveLength(before);
  });

  it('creates an agent with a generated secret, shown once, and logs who made it without the secret', async () => {
    const answer = await submit(owner, '/agents/new', '/agents/new', { ...scout, responsible: m.ids.mia, delivery_url: `${m.receiver.url}/scout` });
    expect(answer.status).toBe(200);
    expect(words(answer.text)).toContain('Copy it now: it will not be shown again.');
    const shown = secretOnPage(answer.text);
    const row = await agentRow('scout');
    expect(shown).toBeDefined();
    expect(row).toMatchObject({ name: 'Scout', autonomy: 2, budget: 40, responsible_person_id: m.ids.mia, status: 'active', managed_by: 'console', signing_secret: shown });
    expect(row.delivery).toEqual({ kind: 'webhook', url: `${m.receiver.url}/scout` });
    const [created] = await activity('agent.created');
    expect(created).toMatchObject({ person_id: m.ids.owner, agent_id: row.id, summary: 'created the agent Scout (scout)' });
    expect(created.details).toMatchObject({ key: 'scout', autonomy: 2, budget: 40, signing: 'a generated secret' });
    expect(JSON.stringify(created.details)).not.toContain('whsec_');
    // Never again: not on the agent's page, nor on its edit page.
    for (const path of [`/agents/${row.id}`, `/agents/${row.id}/edit`]) {
      const page = await owner.get(path);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain(shown);
    }
    expect((await owner.get(`/agents/${row.id}`)).text).toContain(`href="/agents/${row.id}/edit"`);
  });

  it('delivers a message to the console-made agent signed with the generated secret', async () => {
    const row = await agentRow('scout');
    const mcp = await connectOrgMcp(m.org, { clientName: 'Owner laptop' });
    try {
      await mcp.callOk('message_agent', { agent_id: row.id, text: 'hello scout', space_id: m.ids.general, wait_seconds: 0 });
    } finally {
      await mcp.close();
    }
    for (let waited = 0; !m.receiver.calls.some((entry) => entry.path === '/scout') && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    const call = m.receiver.calls.find((entry) => entry.path === '/scout');
    expect(call, 'the agent received the message').toBeDefined();
    const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(call!.headers[name])]));
    expect(new Webhook(row.signing_secret!).verify(call!.body, headers)).toMatchObject({ text: 'hello scout' });
  });

  it('edits the settings (the key fixed), logging the fields changed', async () => {
    const row = await agentRow('scout');
    const edit = `/agents/${row.id}/edit`;
    const answer = await submit(admin, edit, edit, { name: 'Scout', description: 'Looks around', autonomy: '3', budget: '', responsible: m.ids.mia, delivery_url: `${m.receiver.url}/scout`, secret: 'keep', key: 'renamed' });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`/agents/${row.id}`);
    expect(await agentRow('scout')).toMatchObject({ autonomy: 3, budget: null, signing_secret: row.signing_secret });
    expect(await agentRow('renamed')).toBeUndefined();
    const [updated] = await activity('agent.updated');
    expect(updated.details).toEqual({ changed: { autonomy: 3, budget: null } });
    expect(updated.summary).toBe('changed the agent Scout: autonomy, budget');
    const [ada] = await m.rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${ADA.email}`);
    expect(updated.person_id).toBe(ada.id);
  });

  it('generates a new secret on the edit page (shown once), or takes one from an environment variable', async () => {
    const row = await agentRow('scout');
    const edit = `/agents/${row.id}/edit`;
    const fields = { name: 'Scout', description: 'Looks around', autonomy: '3', budget: '', responsible: m.ids.mia, delivery_url: `${m.receiver.url}/scout` };
    const renewed = await submit(owner, edit, edit, { ...fields, secret: 'generate' });
    expect(renewed.status).toBe(200);
    const shown = secretOnPage(renewed.text);
    expect(shown).toBeDefined();
    expect(shown).not.toBe(row.signing_secret);
    expect((await agentRow('scout')).signing_secret).toBe(shown);
    expect((await activity('agent.updated')).at(-1)!.details).toEqual({ changed: { signing: 'a new generated secret' } });

    const named = await submit(owner, edit, edit, { ...fields, secret: 'env', secret_env: 'SCOUT_SECRET' });
    expect(named.status).toBe(303);
    const after = await agentRow('scout');
    expect(after.delivery).toEqual({ kind: 'webhook', url: `${m.receiver.url}/scout`, secret_env: 'SCOUT_SECRET' });
    expect(after.signing_secret).toBeNull();
    expect((await owner.get(edit)).text).toContain('Keep the current one (the environment variable SCOUT_SECRET)');
  });

  it('disables and enables the agent, and a connected application too', async () => {
    const row = await agentRow('scout');
    const status = (browser: Browserless, id: string, value: string) => submit(browser, `/agents/${id}`, `/agents/${id}/status`, { status: value });
    expect((await status(owner, row.id, 'disabled')).status).toBe(303);
    expect((await agentRow('scout')).status).toBe('disabled');
    expect((await owner.get(`/agents/${row.id}`)).text).toContain('>Enable</button>');
    expect((await status(owner, row.id, 'active')).status).toBe(303);
    expect((await agentRow('scout')).status).toBe('active');
    const toggles = (await activity('agent.updated')).filter((entry) => entry.details.changed.status);
    expect(toggles.map((entry) => entry.summary)).toEqual(['disabled the agent Scout', 'enabled the agent Scout']);

    const client = await recordClientAgent(m.org.service.database.db, { clientId: 'atr_cl_manage', clientName: 'Mia laptop', personId: m.ids.mia });
    const page = await owner.get(`/agents/${client}`);
    expect(page.text).not.toContain(`/agents/${client}/edit`);
    expect((await status(owner, client, 'disabled')).status).toBe(303);
    const [clientRow] = await m.rows<{ status: string }>(sql`SELECT status FROM agents WHERE id = ${client}`);
    expect(clientRow.status).toBe('disabled');
    expect((await owner.get(`/agents/${client}/edit`)).status).toBe(409);
    const [assistant] = await m.rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'assistant'`);
    const builtin = await status(owner, assistant.id, 'disabled');
    expect(builtin.status).toBe(409);
    expect(words(builtin.text)).toContain('is built in');
  });

  it('refuses message_agent to the agent the moment it is disabled, and delivers again the moment it is enabled', async () => {
    process.env.SCOUT_SECRET = `whsec_${Buffer.from('scout-secret-for-this-test').toString('base64')}`;
    const row = await agentRow('scout');
    const status = (value: string) => submit(owner, `/agents/${row.id}`, `/agents/${row.id}/status`, { status: value });
    const mcp = await connectOrgMcp(m.org, { clientName: 'Owner laptop' });
    try {
      // Each call reads the agent from the process's memory once it has read it there.
      const message = { agent_id: row.id, text: 'still there?', space_id: m.ids.general, wait_seconds: 0 };
      await mcp.callOk('message_agent', message);
      expect((await status('disabled')).status).toBe(303);
      expect(await mcp.callError('message_agent', message)).toMatchObject({ code: 'agent_disabled' });
      expect((await status('active')).status).toBe(303);
      await mcp.callOk('message_agent', message);
    } finally {
      await mcp.close();
    }
  });

  it('marks the file\'s agent "from org.yaml", offers no edit, and refuses its edits (409) naming the file', async () => {
    const page = await owner.get(`/agents/${m.ids.filed}`);
    expect(page.text).toContain('from org.yaml');
    expect(page.text).not.toContain(`/agents/${m.ids.filed}/edit`);
    expect(page.text).not.toContain(`/agents/${m.ids.filed}/status`);
    expect((await owner.get('/agents')).text).toContain('from org.yaml');
    expect((await owner.get(`/agents/${m.ids.filed}/edit`)).status).toBe(409);
    const before = await agentRow('filed');
    const edit = await submit(owner, '/agents', `/agents/${m.ids.filed}/edit`, { name: 'Hijacked', autonomy: '3', delivery_url: '', secret: 'generate' });
    expect(edit.status).toBe(409);
    expect(words(edit.text)).toContain('the agent Filed Agent is managed by org.yaml: change it there and apply the file again');
    const disable = await submit(owner, '/agents', `/agents/${m.ids.filed}/status`, { status: 'disabled' });
    expect(disable.status).toBe(409);
    expect(await agentRow('filed')).toEqual(before);
  });

  describe.runIf(engine === PAGE_CHECK_ENGINE)('in Chromium', () => {
    const chromium = ownerInChromium(() => m.org.url);

    it('passes the browser check: the new-agent form, its problems, the secret shown once, the edit form, the agent', async () => {
      const page = await chromium.context().newPage();
      const scout = await agentRow('scout');
      await checkPage(page, `${m.org.url}/agents/new`, 'agent-new');
      await checkPage(
        page,
        async (tab) => {
          await tab.goto(`${m.org.url}/agents/new`);
          await tab.getByLabel('Key').fill('Bad Key');
          await tab.getByLabel('Name', { exact: true }).fill('Bad');
          await tab.locator('form[action="/agents/new"]').evaluate((form: HTMLFormElement) => form.setAttribute('novalidate', ''));
          await tab.getByRole('button', { name: 'Create agent' }).click();
          await tab.getByText('Nothing was saved').waitFor();
        },
        'agent-new-problems',
      );
      let made = 0;
      await checkPage(
        page,
        async (tab) => {
          await tab.goto(`${m.org.url}/agents/new`);
          await tab.getByLabel('Key').fill(`browser-${++made}`);
          await tab.getByLabel('Name', { exact: true }).fill('Browser agent with a long name that wraps on a phone');
          await tab.getByLabel('Delivery URL').fill(`${m.receiver.url}/browser`);
          await tab.getByRole('button', { name: 'Create agent' }).click();
          await tab.getByText('it will not be shown again').waitFor();
        },
        'agent-secret-once',
      );
      await checkPage(page, `${m.org.url}/agents/${scout.id}/edit`, 'agent-edit');
      await checkPage(page, `${m.org.url}/agents/${scout.id}`, 'agent-manage');
      await checkPage(page, `${m.org.url}/agents`, 'agents-manage');
      await page.close();
    }, pageChecksTimeout(6));
  });
});
