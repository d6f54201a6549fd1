/**
 * The console's operations, agents and capabilities pages (DESIGN 4.6), end to end: real operations started
 * through MCP (capabilities through the gate, a decision resolved by a person, messages delivered to an agent's
 * webhook, a delivery refused), read by an owner who sees everything and by members who see only their spaces'
 * records and their own — on every page, nothing of another space shows. Then each page in Chromium.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret, startReceiver, type Receiver } from '../helpers/agents-at-work.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectOrgMcp, type OrgMcp, settleOperation } from '../helpers/org-mcp.js';
import { checkPage, launchChromium, PAGE_CHECK_ENGINE, pageChecksTimeout } from '../helpers/page-check.js';
import { signInAs } from '../helpers/sdk-oauth.js';
import { Browserless } from '../helpers/web-client.js';

const MIA = { email: 'mia@example.com', password: 'mia-password-123' };
const OTTO = { email: 'otto@example.com', password: 'otto-password-123' };
const HOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const SCRIBE_SECRET = newWebhookSecret();

/** The operation once it leaves queued and running; these runs get 15 s. */
const settle = (client: OrgMcp, operationId: string) => settleOperation(client, operationId, 300);

describe.each(engines)('console pages of operations, agents and capabilities on %s', (engine) => {
  let org: TestOrg;
  let receiver: Receiver;
  let dir: string;
  let mia: OrgMcp;
  let otto: OrgMcp;
  let governor: OrgMcp;
  const ids: Record<string, string> = {};
  const owner = () => signedIn(OWNER);
  const asMia = () => signedIn(MIA);

  async function signedIn(person: { email: string; password: string }): Promise<Browserless> {
    const browser = new Browserless(org.url);
    expect((await browser.signIn(person.email, person.password)).status).toBe(303);
    return browser;
  }

  beforeAll(async () => {
    // The agent's webhook and the capabilities' webhooks: a message asking to fail is refused (400: undeliverable at once).
    receiver = await startReceiver((delivery) => (String(delivery.body.text ?? '').includes('fail-me') ? { status: 400 } : { status: 200, body: { result: { done: true } } }));
    process.env.CONSOLE_HOOK_SECRET = HOOK_SECRET;
    process.env.CONSOLE_SCRIBE_SECRET = SCRIBE_SECRET;
    process.env.CONSOLE_MIA_PASSWORD = MIA.password;
    process.env.CONSOLE_OTTO_PASSWORD = OTTO.password;
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-console-'));
    const orgFile = path.join(dir, 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Console Co, client_autonomy: 2 }
people:
  - { email: ${MIA.email}, name: Mia, role: member, password_env: CONSOLE_MIA_PASSWORD }
  - { email: ${OTTO.email}, name: Otto, role: member, password_env: CONSOLE_OTTO_PASSWORD }
spaces:
  - { key: alpha, name: Alpha Space, members: [${OWNER.email}, ${MIA.email}] }
  - { key: beta, name: Beta Space, members: [${OTTO.email}] }
agents:
  - { key: scribe, name: Scribe, description: Writes things, autonomy: 2, budget: 50, responsible: ${OWNER.email}, delivery: { kind: webhook, url: "${receiver.url}?token=agent-url-secret", secret_env: CONSOLE_SCRIBE_SECRET } }
capabilities:
  - key: notify_team
    name: Notify the team
    risk: low
    cost: 2
    connector: { kind: webhook, url: "${receiver.url}/notify?key=hook-url-secret", secret_env: CONSOLE_HOOK_SECRET }
  - key: wire_money
    name: Wire money
    risk: high
    connector: { kind: webhook, url: "${receiver.url}/wire", secret_env: CONSOLE_HOOK_SECRET }
rules:
  - { name: Trial notices, when: { capability: notify_team }, then: deny, mode: shadow }
  - { name: Critical needs a person, when: { risk: critical }, then: require_approval }
  - { name: Big wires, when: { capability: wire_money, input: { path: /amount, op: gt, value: 1000 } }, then: deny }
`,
    );
    org = await startOrg(engine, { config: { orgFile } });
    const rows = await org.service.database.rows<{ id: string; key: string }>(
      sql`SELECT id, key FROM spaces UNION ALL SELECT id, key FROM agents WHERE key IS NOT NULL UNION ALL SELECT id, key FROM capabilities`,
    );
    for (const row of rows) ids[row.key] = row.id;
    mia = await connectOrgMcp(org, { email: MIA.email, password: MIA.password, clientName: 'Mia laptop' });
    otto = await connectOrgMcp(org, { email: OTTO.email, password: OTTO.password, clientName: 'Otto beta-only client' });
    // A client names itself; a right-to-left override in its name must not reorder what people read about it.
    governor = await connectOrgMcp(org, { scopes: ['governance:admin'], clientName: 'Owner \u202Egovernance' });

    const execute = (client: OrgMcp, key: string, space: string, input: Record<string, unknown>) =>
      client.callOk('execute_capability', { capability_id: ids[key], input, space_id: ids[space], wait_seconds: 10 });
    const message = (client: OrgMcp, space: string, text: string) => client.callOk('message_agent', { agent_id: ids.scribe, text, space_id: ids[space], wait_seconds: 10 });

    ids.alphaNotice = (await execute(mia, 'notify_team', 'alpha', { text: 'alpha notice' })).operation_id;
    const wire = await execute(mia, 'wire_money', 'alpha', { amount: 5, memo: 'alpha wire' });
    expect(wire.status).toBe('paused');
    ids.alphaWire = wire.operation_id;
    await governor.callOk('resolve_decision', { decision_id: wire.decision_id, outcome: 'approve', note: 'fine by the owner' });
    await settle(mia, ids.alphaWire);
    ids.alphaMessage = (await message(mia, 'alpha', 'alpha hello')).operation_id;
    ids.alphaFailed = (await message(mia, 'alpha', 'alpha fail-me')).operation_id;

    ids.betaNotice = (await execute(otto, 'notify_team', 'beta', { text: 'beta secret notice' })).operation_id;
    ids.betaMessage = (await message(otto, 'beta', 'beta secret hello')).operation_id;
    ids.betaFailed = (await message(otto, 'beta', 'beta fail-me secret')).operation_id;
    for (const [client, id] of [[mia, ids.alphaMessage], [mia, ids.alphaFailed], [otto, ids.betaMessage], [otto, ids.betaFailed]] as const) await settle(client, id);
    // Otto approves his own client's wire in the inbox and remembers it: a learned rule over his client.
    const betaWire = await execute(otto, 'wire_money', 'beta', { amount: 7, memo: 'beta secret wire' });
    ids.betaWire = betaWire.operation_id;
    const inbox = await signedIn(OTTO);
    const csrf = inbox.hidden((await inbox.get('/inbox')).text, 'csrf');
    expect((await inbox.post('/inbox/resolve', { csrf, decision_id: betaWire.decision_id, outcome: 'approve', remember: '1' })).status).toBe(303);
    await settle(otto, ids.betaWire);
  });
  afterAll(async () => {
    await Promise.all([mia?.close(), otto?.close(), governor?.close()]);
    await org?.close();
    await receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** What of the beta space a member of alpha must never see: its operations' ids, its space, its texts, its client. */
  const betaTraces = () => [ids.betaNotice, ids.betaMessage, ids.betaFailed, ids.betaWire, 'Beta Space', 'beta secret', 'Otto beta-only client'];

  function expectNoBeta(html: string) {
    for (const trace of betaTraces()) expect(html, `the page shows ${trace}`).not.toContain(trace);
  }

  describe('/operations', () => {
    it('lists every operation for the owner, newest first, with status, kind, agent, capability, space, person and times', async () => {
      const page = await (await owner()).get('/operations');
      expect(page.status).toBe(200);
      const order = [ids.betaFailed, ids.betaMessage, ids.betaNotice, ids.alphaFailed, ids.alphaMessage, ids.alphaWire, ids.alphaNotice].map((id) => page.text.indexOf(id));
      expect(order.every((index) => index > 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(page.text).toContain('Beta Space');
      expect(page.text).toContain('<span class="badge succeeded">succeeded</span>');
      expect(page.text).toContain(`href="/capabilities/${ids.notify_team}">notify_team</a>`);
      expect(page.text).toContain(`href="/agents/${ids.scribe}">Scribe</a>`);
      // The Kind column says what each capability operation is about, as the home does.
      expect(page.text).toContain('<td data-label="Kind">capability<small>: Notify the team</small></td>');
      expect(page.text).toContain('<td data-label="Kind">capability<small>: Wire money</small></td>');
      expect(page.text).toContain('<td data-label="Kind">message</td>');
    });

    it('shows a member only the operations of their spaces and their own', async () => {
      const page = await (await asMia()).get('/operations');
      expect(page.status).toBe(200);
      for (const id of [ids.alphaNotice, ids.alphaWire, ids.alphaMessage, ids.alphaFailed]) expect(page.text).toContain(id);
      expectNoBeta(page.text);
    });

    it('filters by status, kind, agent, capability and space with a GET form', async () => {
      const browser = await owner();
      const failed = await browser.get('/operations?status=failed');
      expect(failed.text).toContain(ids.alphaFailed);
      expect(failed.text).not.toContain(ids.alphaNotice);
      const capability = await browser.get(`/operations?capability=${ids.notify_team}&space=${ids.alpha}`);
      expect(capability.text).toContain(ids.alphaNotice);
      for (const id of [ids.betaNotice, ids.alphaWire, ids.alphaMessage]) expect(capability.text).not.toContain(id);
      const messages = await browser.get(`/operations?kind=message&agent=${ids.scribe}&status=`);
      for (const id of [ids.alphaMessage, ids.betaMessage]) expect(messages.text).toContain(id);
      expect(messages.text).not.toContain(ids.alphaNotice);
      expect(messages.text).toContain('<option value="message" selected>message</option>');
    });

    it('answers 400 for a filter it does not know', async () => {
      const browser = await owner();
      expect((await browser.get('/operations?status=exploded')).status).toBe(400);
      expect((await browser.get('/operations?before=yesterday')).status).toBe(400);
    });

    it('sends someone not signed in to sign in', async () => {
      const page = await new Browserless(org.url).get('/operations');
      expect(page.status).toBe(303);
      expect(page.headers.get('location')).toContain('/signin');
    });
  });

  describe('/operations/:id', () => {
    it('tells a paused and approved capability operation whole: timeline, verdict and reasons, decision and who resolved it, result', async () => {
      const page = await (await asMia()).get(`/operations/${ids.alphaWire}`);
      expect(page.status).toBe(200);
      const text = page.text;
      expect(text).toContain('<h1>capability operation: Wire money <span class="badge succeeded">succeeded</span></h1>');
      expect(text).toContain('<h2>Timeline</h2>');
      expect(text).toContain('Queued');
      expect(text).toMatch(/Paused|Decision requested/);
      expect(text).toContain('<span class="badge require_approval">require approval</span>');
      expect(text).toContain('autonomy');
      expect(text).toContain('<span class="badge approved">approved</span>');
      expect(text).toContain(`Owner, through the client Owner governance (client id ${governor.connected.clientId})`);
      expect(text).toContain(`through the client Mia laptop (client id ${mia.connected.clientId})`);
      expect(text).not.toMatch(/[\u202A-\u202E]/);
      expect(text).toContain('fine by the owner');
      expect(text).toContain('<span class="badge succeeded">succeeded</span>');
      expect(text).toContain('&quot;memo&quot;: &quot;alpha wire&quot;');
    });

    it('shows a message operation’s delivery and a refused delivery’s error', async () => {
      const browser = await asMia();
      const delivered = await browser.get(`/operations/${ids.alphaMessage}`);
      expect(delivered.text).toContain('<span class="badge delivered">delivered</span>');
      expect(delivered.text).toContain('&quot;done&quot;: true');
      const refused = await browser.get(`/operations/${ids.alphaFailed}`);
      expect(refused.text).toContain('<span class="badge failed">failed</span>');
      expect(refused.text).toMatch(/<code>undeliverable<\/code>|<code>agent_refused<\/code>|400/);
    });

    it('shows the shadow rule a verdict recorded', async () => {
      const page = await (await asMia()).get(`/operations/${ids.alphaNotice}`);
      expect(page.text).toContain('<span class="badge allow">allow</span>');
      expect(page.text).toContain('Trial notices: deny');
    });

    it('cuts a large result to a few kilobytes and says so', async () => {
      const big = { text: 'x'.repeat(20_000) };
      await org.service.database.db.execute(sql`UPDATE operations SET result = ${JSON.stringify(big)}::jsonb WHERE id = ${ids.alphaNotice}`);
      const page = await (await asMia()).get(`/operations/${ids.alphaNotice}`);
      expect(page.text).toContain('Shortened: the first 4,096 of');
      expect(page.text.length).toBeLessThan(20_000);
    });

    it('answers an operation of another space exactly as an unknown one: 404', async () => {
      const browser = await asMia();
      const other = await browser.get(`/operations/${ids.betaNotice}`);
      const unknown = await browser.get('/operations/op_doesnotexist');
      expect(other.status).toBe(404);
      expect(unknown.status).toBe(404);
      const csrfless = (html: string) => html.replace(/name="csrf" value="[^"]*"/g, '');
      expect(csrfless(other.text)).toBe(csrfless(unknown.text));
      expectNoBeta(other.text);
      expect((await (await owner()).get(`/operations/${ids.betaNotice}`)).status).toBe(200);
    });
  });

  describe('/agents', () => {
    it('lists agents with autonomy, responsible person, status and this month’s budget on a meter', async () => {
      const page = await (await owner()).get('/agents');
      expect(page.status).toBe(200);
      expect(page.text).toContain(`href="/agents/${ids.scribe}">Scribe</a>`);
      expect(page.text).toContain('2 · act within rules');
      expect(page.text).toMatch(/<meter[^>]*max="50"/);
      expect(page.text).toContain('<span class="badge enabled">enabled</span>');
      expect(page.text).toContain('Otto beta-only client');
    });

    it('shows a member no one else’s connected client', async () => {
      const page = await (await asMia()).get('/agents');
      expect(page.text).toContain('Mia laptop');
      expectNoBeta(page.text);
    });

    it('shows an agent’s last delivery, its failures and recent work, only of the reader’s spaces', async () => {
      const page = await (await asMia()).get(`/agents/${ids.scribe}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('webhook to 127.0.0.1');
      expect(page.text).not.toContain('agent-url-secret');
      expect(page.text).toContain('1 delivery failed.');
      expect(page.text).toContain(ids.alphaMessage);
      expect(page.text).toContain(ids.alphaFailed);
      expectNoBeta(page.text);
      // Everything the agent did, in the activity log: what Mia may see of it.
      expect(page.text).toContain(`href="/activity?agent=${ids.scribe}">Everything Scribe did, in the activity log</a>`);
      const activity = await (await asMia()).get(`/activity?agent=${ids.scribe}`);
      expect(activity.text).toContain(`/operations/${ids.alphaMessage}`);
      expectNoBeta(activity.text);
      // Its agent filter offers her own client, never another person's; the owner's offers both.
      expect(activity.text).toContain('>Mia laptop</option>');
      expect((await (await owner()).get('/activity')).text).toContain('>Otto beta-only client</option>');
      const all = await (await owner()).get(`/agents/${ids.scribe}`);
      expect(all.text).toContain('2 deliveries failed.');
      expect(all.text).toContain(ids.betaMessage);
    });

    it('answers another person’s client and an unknown agent alike: 404', async () => {
      const [client] = await org.service.database.rows<{ id: string }>(sql`SELECT id FROM agents WHERE name = 'Otto beta-only client'`);
      const browser = await asMia();
      expect((await browser.get(`/agents/${client.id}`)).status).toBe(404);
      expect((await browser.get('/agents/agt_nope')).status).toBe(404);
    });
  });

  describe('/capabilities', () => {
    it('lists capabilities with risk, cost and the connector’s host, never its path or secrets', async () => {
      const page = await (await asMia()).get('/capabilities');
      expect(page.status).toBe(200);
      expect(page.text).toContain(`href="/capabilities/${ids.notify_team}">notify_team</a>`);
      expect(page.text).toContain('<span class="badge high">high</span>');
      expect(page.text).toContain(`webhook to ${new URL(receiver.url).host}`);
      for (const secret of ['hook-url-secret', '/notify', HOOK_SECRET, 'CONSOLE_HOOK_SECRET']) expect(page.text).not.toContain(secret);
    });

    it('shows the rules that apply, how often a shadow rule would have fired, and recent verdicts of the reader’s spaces', async () => {
      const page = await (await asMia()).get(`/capabilities/${ids.notify_team}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('Trial notices');
      expect(page.text).toContain('shadow (never enforced)');
      expect(page.text).not.toContain('Critical needs a person');
      expect(page.text).not.toContain('Big wires');
      expect(page.text).toContain('1 time');
      expect(page.text).toContain(ids.alphaNotice);
      expectNoBeta(page.text);
      expect(page.text).toContain(`href="/activity?capability=${ids.notify_team}">Everything done with Notify the team, in the activity log</a>`);
      const activity = await (await asMia()).get(`/activity?capability=${ids.notify_team}`);
      expect(activity.text).toContain(`/operations/${ids.alphaNotice}`);
      expect(activity.text).not.toContain(`/operations/${ids.alphaWire}`);
      expectNoBeta(activity.text);
      const all = await (await owner()).get(`/capabilities/${ids.notify_team}`);
      expect(all.text).toContain('2 times');
      expect(all.text).toContain(ids.betaNotice);
      const wire = await (await asMia()).get(`/capabilities/${ids.wire_money}`);
      expect(wire.text).toContain('Big wires');
      expect(wire.text).toContain('input /amount gt 1000');
      expectNoBeta(wire.text);
      const wireForOwner = await (await owner()).get(`/capabilities/${ids.wire_money}`);
      expect(wireForOwner.text).toContain('learned: allow Otto beta-only client');
      expect(wireForOwner.text).toContain(ids.betaWire);
    });

    it('answers an unknown capability 404', async () => {
      expect((await (await asMia()).get('/capabilities/cap_nope')).status).toBe(404);
    });
  });

  describe('paging', () => {
    it('pages operations 50 at a time with an "Older" link that neither skips nor repeats', async () => {
      const started: string[] = [];
      for (let index = 0; index < 52; index += 1) {
        const operation = await mia.callOk('execute_capability', { capability_id: ids.notify_team, input: { text: `page ${index}` }, space_id: ids.alpha, wait_seconds: 0 });
        started.push(operation.operation_id);
      }
      const browser = await asMia();
      const seen: string[] = [];
      let next: string | null = `/operations?capability=${ids.notify_team}`;
      while (next) {
        const page = await browser.get(next);
        const rows = [...page.text.matchAll(/<a href="\/operations\/(op_[\w-]+)"><code>/g)].map((match) => match[1]);
        expect(rows.length).toBeLessThanOrEqual(50);
        seen.push(...rows);
        const older = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(page.text);
        next = older ? older[1].replace(/&amp;/g, '&') : null;
      }
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of [...started, ids.alphaNotice]) expect(seen).toContain(id);
      expectNoBeta(seen.join(' '));
    });
  });

  describe.runIf(engine === PAGE_CHECK_ENGINE)('in Chromium', () => {
    let chromium: Browser;
    let signedIn: BrowserContext;
    beforeAll(async () => {
      chromium = await launchChromium();
      signedIn = await chromium.newContext();
      const page = await signedIn.newPage();
      await page.goto(`${org.url}/signin`);
      await signInAs(page, MIA.email, MIA.password);
      await page.waitForURL((url) => url.pathname !== '/signin');
      await page.close();
    });
    afterAll(async () => {
      await chromium?.close();
    });

    const pages: Array<[name: string, route: () => string]> = [
      ['operations', () => '/operations'],
      ['operation', () => `/operations/${ids.alphaWire}`],
      ['operation-message', () => `/operations/${ids.alphaFailed}`],
      ['operation-not-found', () => `/operations/${ids.betaNotice}`],
      ['agents', () => '/agents'],
      ['agent', () => `/agents/${ids.scribe}`],
      ['capabilities', () => '/capabilities'],
      ['capability', () => `/capabilities/${ids.notify_team}`],
    ];

    it.each(pages)('%s passes axe-core and fits a phone', { timeout: pageChecksTimeout(1) }, async (name, route) => {
      const page = await signedIn.newPage();
      try {
        await checkPage(page, `${org.url}${route()}`, `${name}-${engine}`);
      } finally {
        await page.close();
      }
    });
  });
});
