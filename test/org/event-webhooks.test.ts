/**
 * Organization events for other tools (issue 20 item 4, DESIGN 4.8): endpoints from the organization file and the
 * console receive decision.pending, decision.resolved, operation.failed, task.question and budget.threshold as
 * Standard Webhooks that the `standardwebhooks` library verifies, with the README's bodies; an endpoint gets only the
 * types it takes; a 503 with Retry-After is tried again with the same webhook-id and arrives once; the announce job
 * running twice delivers nothing more; file endpoints are not changed on the console and re-applying the file keeps
 * the console's.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyOrgFile } from '../../src/org/org-file/apply.js';
import { parseOrgFile } from '../../src/org/org-file/schema.js';
import { enqueueJob } from '../../src/platform/jobs.js';
import { toIso } from '../../src/platform/time.js';
import { askTaskQuestion } from '../../src/org/tasks/agent.js';
import { closedPort, startReceiver, type ReceivedDelivery, type Receiver } from '../helpers/agents-at-work.js';
import { engines, type Engine } from '../helpers/databases.js';
import { connectOrgMcp, settleOperation, type OrgMcp } from '../helpers/org-mcp.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { checkPage, launchChromium, PAGE_CHECK_ENGINE, pageChecksTimeout } from '../helpers/page-check.js';
import { Browserless } from '../helpers/web-client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const BEA = { email: 'bea@example.com', password: 'bea-password-123' };
const BRIDGE_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const FLAKY_SECRET = `whsec_${randomBytes(24).toString('base64')}`;

/** Verifies a received event with the Standard Webhooks library, as a receiver would, and returns its body. */
function verified(secret: string, delivery: ReceivedDelivery): any {
  const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(delivery.headers[name])]));
  return new Webhook(secret).verify(delivery.raw, headers);
}

/** Every field path of a JSON object (into nested objects, not lists), sorted. */
function fieldsOf(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value)
    .flatMap(([key, inner]) => [`${prefix}${key}`, ...fieldsOf(inner, `${prefix}${key}.`)])
    .sort();
}

const ofType = (receiver: Receiver, type: string) => receiver.received.filter((delivery) => delivery.body.type === type);

async function waitFor<T>(what: string, read: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  for (const started = Date.now(); Date.now() - started < timeoutMs; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const value = await read();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.each(engines)('organization events as Standard Webhooks on %s', (engine: Engine) => {
  let dir: string;
  let orgFile: string;
  let org: TestOrg;
  /** The file's endpoint `bridge`, taking every event. */
  let bridge: Receiver;
  /** A console endpoint taking budget.threshold only, with a secret the server generated. */
  let budgetOnly: Receiver;
  let budgetSecret: string;
  /** A console endpoint taking task.question only, that answers its first attempt 503 with Retry-After: 1. */
  let flaky: Receiver;
  /** A console endpoint taking operation.failed only, that answers 410. */
  let gone: Receiver;
  let world: WebhookReceiver;
  let scribeHook: WebhookReceiver;
  let actor: OrgMcp;
  let metered: OrgMcp;
  let owner: Browserless;
  let spaceId: string;
  const ids: Record<string, string> = {};

  const rows = <T extends Record<string, unknown>>(query: ReturnType<typeof sql>) => org.service.database.rows<T>(query);
  const capabilityId = async (key: string) => (await rows<{ id: string }>(sql`SELECT id FROM capabilities WHERE key = ${key}`))[0].id;

  async function addEndpoint(form: Record<string, string | string[]>): Promise<{ id: string; text: string; status: number }> {
    const page = await owner.get('/events');
    const answer = await owner.post('/events', { csrf: owner.hidden(page.text, 'csrf'), ...form });
    const [row] = await rows<{ id: string }>(sql`SELECT id FROM event_endpoints WHERE key = ${form.key as string}`);
    return { id: row?.id, text: answer.text, status: answer.status };
  }

  beforeAll(async () => {
    bridge = await startReceiver(() => ({ status: 204 }));
    budgetOnly = await startReceiver(() => ({ status: 200 }));
    flaky = await startReceiver((_delivery, index) => (index === 0 ? { status: 503, headers: { 'retry-after': '1' }, body: { error: 'busy' } } : { status: 200 }));
    gone = await startReceiver(() => ({ status: 410, body: { error: 'this hook was removed' } }));
    world = await startWebhookReceiver();
    scribeHook = await startWebhookReceiver();
    scribeHook.answer.status = 202;
    process.env.EVENTS_BRIDGE_SECRET = BRIDGE_SECRET;
    process.env.EVENTS_FLAKY_SECRET = FLAKY_SECRET;
    process.env.EVENTS_HOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
    process.env.EVENTS_BEA_PASSWORD = BEA.password;
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-events-'));
    orgFile = path.join(dir, 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Events Co, client_autonomy: 2 }
people:
  - { email: ${BEA.email}, name: Bea, role: member, password_env: EVENTS_BEA_PASSWORD }
spaces:
  - { key: general, name: General, members: [${OWNER.email}, ${BEA.email}] }
agents:
  - { key: scribe, name: Scribe, autonomy: 2, responsible: ${OWNER.email}, delivery: { kind: webhook, url: "${scribeHook.url}/agent", secret_env: EVENTS_HOOK_SECRET } }
capabilities:
  - { key: wire_money, name: Wire money, risk: high, connector: { kind: webhook, url: "${world.url}/wire", secret_env: EVENTS_HOOK_SECRET } }
  - { key: ping, name: Ping, risk: low, cost: 20, connector: { kind: webhook, url: "${world.url}/ping", secret_env: EVENTS_HOOK_SECRET } }
  - { key: broken_hook, name: Broken hook, risk: low, connector: { kind: webhook, url: "http://127.0.0.1:${await closedPort()}/", secret_env: EVENTS_HOOK_SECRET } }
event_endpoints:
  - { key: bridge, url: "${bridge.url}", secret_env: EVENTS_BRIDGE_SECRET }
`,
    );
    org = await startOrg(engine, { config: { orgFile } });
    [{ id: spaceId }] = await rows<{ id: string }>(sql`SELECT id FROM spaces WHERE key = 'general'`);
    actor = await connectOrgMcp(org, { clientName: 'Events client' });
    metered = await connectOrgMcp(org, { clientName: 'Metered client' });
    owner = new Browserless(org.url);
    expect((await owner.signIn(OWNER.email, OWNER.password)).status).toBe(303);
  });
  afterAll(async () => {
    await actor?.close();
    await metered?.close();
    await org?.close();
    for (const receiver of [bridge, budgetOnly, flaky, gone, world, scribeHook]) await receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('adds console endpoints: a generated secret shown once, or one named by secret_env; each takes the events ticked', async () => {
    const added = await addEndpoint({ key: 'budget-watch', url: budgetOnly.url, events: ['budget.threshold'] });
    expect(added.status).toBe(200);
    budgetSecret = /<code>(whsec_[A-Za-z0-9+/=]+)<\/code>/.exec(added.text)![1];
    expect(budgetSecret).toMatch(/^whsec_/);
    const page = await owner.get(`/events/${added.id}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(budgetSecret);
    ids.budgetWatch = added.id;

    const named = await addEndpoint({ key: 'questions', url: flaky.url, events: ['task.question'], secret_env: 'EVENTS_FLAKY_SECRET' });
    expect(named.status).toBe(303);
    expect(named.text).not.toContain('whsec_');
    ids.questions = named.id;
    // The generated secret is the Standard Webhooks form; this one is never used (the endpoint answers 410).
    expect((await addEndpoint({ key: 'gone', url: gone.url, events: ['operation.failed'] })).status).toBe(200);

    expect(await rows(sql`SELECT key, events, secret_env, signing_secret IS NOT NULL AS generated, enabled, managed_by FROM event_endpoints ORDER BY key`)).toEqual([
      { key: 'bridge', events: [], secret_env: 'EVENTS_BRIDGE_SECRET', generated: false, enabled: true, managed_by: 'file' },
      { key: 'budget-watch', events: ['budget.threshold'], secret_env: null, generated: true, enabled: true, managed_by: 'console' },
      { key: 'gone', events: ['operation.failed'], secret_env: null, generated: true, enabled: true, managed_by: 'console' },
      { key: 'questions', events: ['task.question'], secret_env: 'EVENTS_FLAKY_SECRET', generated: false, enabled: true, managed_by: 'console' },
    ]);
    const [person] = await rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${OWNER.email}`);
    expect(await rows(sql`SELECT person_id, summary FROM org_activity WHERE kind = 'endpoint.created' ORDER BY seq`)).toEqual([
      { person_id: person.id, summary: `added the event endpoint budget-watch (${new URL(budgetOnly.url).host})` },
      { person_id: person.id, summary: `added the event endpoint questions (${new URL(flaky.url).host})` },
      { person_id: person.id, summary: `added the event endpoint gone (${new URL(gone.url).host})` },
    ]);
  });

  it('refuses an unknown event type and a URL that is not http(s), adding nothing', async () => {
    const answer = await addEndpoint({ key: 'bad', url: 'ftp://example.com/x', events: ['decision.exploded'] });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('Nothing was added');
    expect(answer.id).toBeUndefined();
  });

  it('sends decision.pending, then decision.resolved once the owner approves in the inbox, with the documented bodies', async () => {
    const paused = await actor.callOk('execute_capability', { capability_id: await capabilityId('wire_money'), input: { amount: 250 }, space_id: spaceId });
    expect(paused.status).toBe('paused');
    await waitFor('decision.pending', () => ofType(bridge, 'decision.pending')[0]);
    const [decision] = await rows<{ reasons: string[]; expires_at: string }>(sql`SELECT reasons, expires_at FROM decisions WHERE id = ${paused.decision_id}`);
    const [agent] = await rows<{ key: string; name: string }>(sql`SELECT key, name FROM agents WHERE id = (SELECT agent_id FROM decisions WHERE id = ${paused.decision_id})`);
    const pendingData = {
      decision_id: paused.decision_id,
      status: 'pending',
      capability: { key: 'wire_money', name: 'Wire money' },
      agent: { key: agent.key, name: 'Events client' },
      risk: 'high',
      reasons: decision.reasons,
      input: { amount: 250 },
      input_truncated: false,
      space: { id: spaceId, name: 'General' },
      requested_for: { name: 'Owner', email: OWNER.email },
      expires_at: toIso(decision.expires_at),
      url: `${org.url}/inbox/decisions/${paused.decision_id}`,
    };
    const [pending] = ofType(bridge, 'decision.pending');
    expect(verified(BRIDGE_SECRET, pending)).toEqual({ type: 'decision.pending', timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), data: pendingData });
    expect(pending.headers['webhook-id']).toMatch(/^evt_/);

    const inbox = await owner.get('/inbox');
    const approved = await owner.post('/inbox/resolve', { csrf: owner.hidden(inbox.text, 'csrf'), decision_id: paused.decision_id, outcome: 'approve' });
    expect(approved.status).toBe(303);
    const resolved = await waitFor('decision.resolved', () => ofType(bridge, 'decision.resolved')[0]);
    expect(verified(BRIDGE_SECRET, resolved)).toEqual({
      type: 'decision.resolved',
      timestamp: expect.any(String),
      data: { ...pendingData, status: 'approved', outcome: 'approved', resolved_by: { name: 'Owner', email: OWNER.email }, via: 'inbox' },
    });
    expect(resolved.headers['webhook-id']).not.toBe(pending.headers['webhook-id']);
    ids.resolvedEvent = String(resolved.headers['webhook-id']);
    ids.decision = paused.decision_id;
  });

  it('sends operation.failed for an action whose connector cannot be reached; an endpoint answering 410 fails at once', async () => {
    const started = await actor.callOk('execute_capability', { capability_id: await capabilityId('broken_hook'), input: {}, space_id: spaceId });
    const failed = await settleOperation(actor, started.operation_id);
    expect(failed.error.code).toBe('connector_failed');
    const delivered = await waitFor('operation.failed', () => ofType(bridge, 'operation.failed')[0]);
    const [agent] = await rows<{ key: string }>(sql`SELECT key FROM agents WHERE name = 'Events client'`);
    expect(verified(BRIDGE_SECRET, delivered)).toEqual({
      type: 'operation.failed',
      timestamp: expect.any(String),
      data: {
        operation_id: started.operation_id,
        kind: 'capability',
        error: { code: 'connector_failed', message: failed.error.message },
        agent: { key: agent.key, name: 'Events client' },
        space: { id: spaceId, name: 'General' },
        url: `${org.url}/operations/${started.operation_id}`,
      },
    });
    await gone.waitForCount(1);
    const settled = await waitFor('the failed delivery', async () => {
      const [row] = await rows(sql`SELECT status, attempts, last_status, last_error FROM event_deliveries WHERE endpoint_id = (SELECT id FROM event_endpoints WHERE key = 'gone')`);
      return row?.status === 'failed' ? row : undefined;
    });
    expect(settled).toEqual({ status: 'failed', attempts: 1, last_status: 410, last_error: 'the endpoint refused the delivery with HTTP 410: this hook was removed' });
    expect(await rows(sql`SELECT summary FROM org_activity WHERE kind = 'endpoint.delivery_failed'`)).toEqual([
      { summary: `the operation.failed event could not be delivered to the endpoint gone (${new URL(gone.url).host}): the endpoint refused the delivery with HTTP 410: this hook was removed` },
    ]);
  });

  it('sends task.question; a 503 with Retry-After is tried again a second later with the same webhook-id, and arrives once', async () => {
    const [scribe] = await rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'scribe'`);
    const task = await actor.callOk('create_task', { space_id: spaceId, title: 'Plan the offsite', assignee_agent_id: scribe.id });
    const questionId = await askTaskQuestion(org.service.ctx.db, task.id, { text: 'Which city suits everyone?', askedBy: scribe.id });
    const data = { task: { id: task.id, title: 'Plan the offsite' }, question: { id: questionId, text: 'Which city suits everyone?' }, space: { id: spaceId, name: 'General' }, url: `${org.url}/inbox` };
    const [first, second] = await flaky.waitForCount(2);
    expect(first.headers['webhook-id']).toBe(second.headers['webhook-id']);
    expect(Number(second.headers['webhook-timestamp']) - Number(first.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(1);
    expect(verified(FLAKY_SECRET, second)).toEqual({ type: 'task.question', timestamp: expect.any(String), data });
    const atBridge = await waitFor('task.question at the bridge', () => ofType(bridge, 'task.question')[0]);
    expect(atBridge.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(verified(BRIDGE_SECRET, atBridge).data).toEqual(data);
    const delivered = await waitFor('the retried delivery', async () => {
      const [row] = await rows(sql`SELECT status, attempts, last_status, last_error FROM event_deliveries WHERE endpoint_id = ${ids.questions}`);
      return row?.status === 'delivered' ? row : undefined;
    });
    expect(delivered).toEqual({ status: 'delivered', attempts: 2, last_status: 200, last_error: 'the endpoint answered HTTP 503: busy' });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(flaky.received).toHaveLength(2);
  });

  it('sends budget.threshold once, from the run that crosses 80 %, to the endpoint that takes only that', async () => {
    const pingId = await capabilityId('ping');
    const [agent] = await rows<{ id: string; key: string }>(sql`SELECT id, key FROM agents WHERE name = 'Metered client'`);
    await org.service.database.db.execute(sql`UPDATE agents SET budget = 100 WHERE id = ${agent.id}`);
    const run = () => metered.callOk('execute_capability', { capability_id: pingId, input: {}, space_id: spaceId, wait_seconds: 10 });
    // 20, 40, 60, 80 (crosses 80 %), 100: the fifth still fits.
    for (let index = 0; index < 5; index += 1) expect((await run()).status).toBe('succeeded');
    const [crossing] = await budgetOnly.waitForCount(1);
    const month = new Date().toISOString().slice(0, 7);
    expect(verified(budgetSecret, crossing)).toEqual({
      type: 'budget.threshold',
      timestamp: expect.any(String),
      data: { agent: { key: agent.key, name: 'Metered client' }, month, used: 80, budget: 100, percent: 80 },
    });
    // The sixth is over the budget: it pauses, and the owner's approval charges it past the budget (120).
    const over = await run();
    expect(over.status).toBe('paused');
    await actor.callOk('resolve_decision', { decision_id: over.decision_id, outcome: 'approve' });
    expect((await settleOperation(metered, over.operation_id)).status).toBe('succeeded');
    expect(await rows(sql`SELECT used, threshold_announced_at IS NOT NULL AS announced FROM agent_usage WHERE agent_id = ${agent.id}`)).toEqual([{ used: 120, announced: true }]);
    const throughClient = await waitFor('the later decision at the bridge', () => ofType(bridge, 'decision.resolved').find((delivery) => delivery.body.data.decision_id === over.decision_id));
    expect(throughClient.body.data).toMatchObject({ outcome: 'approved', resolved_by: { name: 'Owner', email: OWNER.email }, via: 'client' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(budgetOnly.received.map((delivery) => delivery.body.type)).toEqual(['budget.threshold']);
    expect(ofType(bridge, 'budget.threshold')).toHaveLength(1);
  });

  it('sends the bodies the README documents, field for field', async () => {
    const readme = await readFile('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('### Events'), readme.indexOf('\n## ', readme.indexOf('### Events')));
    const documented = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]));
    expect(documented.map((body) => body.type)).toEqual(['decision.pending', 'decision.resolved', 'operation.failed', 'task.question', 'budget.threshold']);
    for (const example of documented) {
      const sent = ofType(bridge, example.type)[0];
      expect(fieldsOf(sent.body), example.type).toEqual(fieldsOf(example));
    }
  });

  it('delivers nothing more when the announce job runs again for the same event', async () => {
    const before = bridge.received.length;
    await enqueueJob(org.service.database.db, 'org.announce', { event_id: ids.resolvedEvent, type: 'decision.resolved', at: new Date().toISOString(), data: { decision_id: ids.decision } });
    await waitFor('the announce job to run', async () => ((await rows(sql`SELECT id FROM jobs WHERE kind = 'org.announce'`)).length === 0 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(bridge.received.length).toBe(before);
    expect(await rows(sql`SELECT count(*)::int AS n FROM event_deliveries WHERE event_id = ${ids.resolvedEvent}`)).toEqual([{ n: 1 }]);
  });

  it('answers 409 to any change of a file endpoint, and 403 to a member, on the console', async () => {
    const [file] = await rows<{ id: string }>(sql`SELECT id FROM event_endpoints WHERE key = 'bridge'`);
    const page = await owner.get(`/events/${file.id}`);
    expect(page.text).toContain('from org.yaml');
    expect(page.text).not.toContain(`action="/events/${file.id}/delete"`);
    const csrf = owner.hidden(page.text, 'csrf');
    expect((await owner.post(`/events/${file.id}`, { csrf, url: 'https://elsewhere.example.com/', events: [] })).status).toBe(409);
    expect((await owner.post(`/events/${file.id}/enabled`, { csrf, enabled: 'false' })).status).toBe(409);
    expect((await owner.post(`/events/${file.id}/delete`, { csrf })).status).toBe(409);
    expect((await owner.post(`/events/${file.id}/delete`, { csrf, confirm: 'yes' })).status).toBe(409);
    expect(await rows(sql`SELECT url, enabled FROM event_endpoints WHERE id = ${file.id}`)).toEqual([{ url: bridge.url, enabled: true }]);

    const bea = new Browserless(org.url);
    await bea.signIn(BEA.email, BEA.password);
    const home = await bea.get('/');
    expect(home.text).not.toContain('href="/events"');
    expect((await bea.get('/events')).status).toBe(403);
    expect((await bea.post('/events', { csrf: bea.hidden(home.text, 'csrf'), key: 'sneaky', url: 'https://example.com/' })).status).toBe(403);
    for (const confirm of [undefined, 'yes']) {
      const form = { csrf: bea.hidden(home.text, 'csrf'), ...(confirm ? { confirm } : {}) };
      expect((await bea.post(`/events/${ids.questions}/delete`, form)).status).toBe(403);
    }
    expect((await owner.get('/')).text).toContain('href="/events"');
  });

  it('lets an owner change, disable and delete a console endpoint, each in the activity log', async () => {
    const page = await owner.get(`/events/${ids.questions}`);
    const csrf = owner.hidden(page.text, 'csrf');
    expect((await owner.post(`/events/${ids.questions}`, { csrf, url: flaky.url, events: ['task.question', 'operation.failed'], secret_env: 'EVENTS_FLAKY_SECRET' })).status).toBe(303);
    expect((await owner.post(`/events/${ids.questions}/enabled`, { csrf, enabled: 'false' })).status).toBe(303);
    expect(await rows(sql`SELECT events, enabled FROM event_endpoints WHERE id = ${ids.questions}`)).toEqual([{ events: ['operation.failed', 'task.question'], enabled: false }]);
    // Delete asks first, deleting nothing; the confirmed form deletes.
    const asked = await owner.post(`/events/${ids.questions}/delete`, { csrf });
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('<h1>Delete the endpoint questions?</h1>');
    expect(asked.text).toContain(`<a href="/events/${ids.questions}">Keep questions</a>`);
    expect(await rows(sql`SELECT id FROM event_endpoints WHERE id = ${ids.questions}`)).toEqual([{ id: ids.questions }]);
    expect((await owner.post('/events/ep_missing/delete', { csrf })).status).toBe(404);
    expect((await owner.post(`/events/${ids.questions}/delete`, { csrf: owner.hidden(asked.text, 'csrf'), confirm: 'yes' })).status).toBe(303);
    expect(await rows(sql`SELECT id FROM event_endpoints WHERE id = ${ids.questions}`)).toEqual([]);
    expect(await rows(sql`SELECT kind, summary FROM org_activity WHERE kind IN ('endpoint.updated', 'endpoint.deleted') ORDER BY seq`)).toEqual([
      { kind: 'endpoint.updated', summary: 'changed the event endpoint questions: events' },
      { kind: 'endpoint.updated', summary: 'disabled the event endpoint questions' },
      { kind: 'endpoint.deleted', summary: `deleted the event endpoint questions (${new URL(flaky.url).host})` },
    ]);
  });

  it.runIf(engine === PAGE_CHECK_ENGINE)('passes the browser check on the events pages for the owner', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${org.url}/signin`);
      await page.getByLabel('Email').fill(OWNER.email);
      await page.getByLabel('Password').fill(OWNER.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname !== '/signin');
      const suffix = engine === 'pglite' ? '' : `-${engine}`;
      await checkPage(page, `${org.url}/events`, `events${suffix}`);
      await checkPage(page, `${org.url}/events/${ids.budgetWatch}`, `events-endpoint${suffix}`);
      const [file] = await rows<{ id: string }>(sql`SELECT id FROM event_endpoints WHERE key = 'bridge'`);
      await checkPage(page, `${org.url}/events/${file.id}`, `events-endpoint-file${suffix}`);
      await checkPage(
        page,
        async (opened) => {
          await opened.goto(`${org.url}/events/${ids.budgetWatch}`);
          await opened.getByRole('button', { name: 'Delete' }).click();
          await opened.getByRole('heading', { name: 'Delete the endpoint budget-watch?' }).waitFor();
        },
        `events-delete${suffix}`,
      );
    } finally {
      await browser.close();
    }
  }, pageChecksTimeout(4));

  it('sends a test event to an endpoint on request, signed as the others, and lists it with its deliveries', async () => {
    const [file] = await rows<{ id: string }>(sql`SELECT id FROM event_endpoints WHERE key = 'bridge'`);
    const page = await owner.get(`/events/${file.id}`);
    const answer = await owner.post(`/events/${file.id}/test`, { csrf: owner.hidden(page.text, 'csrf') });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`/events/${file.id}?sent=test`);
    const test = await waitFor('the test event', () => ofType(bridge, 'endpoint.test')[0]);
    expect(verified(BRIDGE_SECRET, test)).toEqual({
      type: 'endpoint.test',
      timestamp: expect.any(String),
      data: { endpoint: { key: 'bridge' }, url: `${org.url}/events/${file.id}` },
    });
    const listed = await owner.get(`/events/${file.id}?sent=test`);
    expect(listed.text).toContain('A test event is on its way');
    expect(listed.text).toContain(String(test.headers['webhook-id']));
  });

  it('re-applying the file changes nothing and keeps the console endpoints', async () => {
    const report = await applyOrgFile(org.service.database.db, parseOrgFile(await readFile(orgFile, 'utf8')), process.env);
    expect(report.event_endpoints).toEqual({ created: [], updated: [], adopted: [], unchanged: ['bridge'] });
    expect(await rows(sql`SELECT key, managed_by FROM event_endpoints ORDER BY key`)).toEqual([
      { key: 'bridge', managed_by: 'file' },
      { key: 'budget-watch', managed_by: 'console' },
      { key: 'gone', managed_by: 'console' },
    ]);
  });
});

describe.each(engines)('an event delivery past its retry window on %s', (engine: Engine) => {
  it('fails for good with its last error, and says so in the activity log', async () => {
    const down = await startReceiver(() => ({ status: 500, body: { error: 'database down' } }));
    const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-events-window-'));
    const orgFile = path.join(dir, 'org.yaml');
    process.env.EVENTS_DOWN_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
    await writeFile(
      orgFile,
      `organization: { name: Window Co, client_autonomy: 2 }
spaces: [{ key: general, name: General, members: [${OWNER.email}] }]
capabilities:
  - { key: broken_hook, name: Broken hook, risk: low, connector: { kind: webhook, url: "http://127.0.0.1:${await closedPort()}/", secret_env: EVENTS_DOWN_SECRET } }
event_endpoints:
  - { key: down, url: "${down.url}", events: [operation.failed], secret_env: EVENTS_DOWN_SECRET }
`,
    );
    // A one-second window: the first attempt's backoff (1 s) reaches its end, where the delivery gives up.
    const org = await startOrg(engine, { config: { orgFile, events: { windowSeconds: 1 } } });
    const client = await connectOrgMcp(org, { clientName: 'Window client' });
    try {
      const [space] = await org.service.database.rows<{ id: string }>(sql`SELECT id FROM spaces WHERE key = 'general'`);
      const [capability] = await org.service.database.rows<{ id: string }>(sql`SELECT id FROM capabilities WHERE key = 'broken_hook'`);
      await client.callOk('execute_capability', { capability_id: capability.id, input: {}, space_id: space.id });
      const failed = await waitFor('the delivery to fail', async () => {
        const [row] = await org.service.database.rows(sql`SELECT status, attempts, last_status, last_error FROM event_deliveries`);
        return row?.status === 'failed' ? row : undefined;
      });
      expect(failed).toEqual({ status: 'failed', attempts: 1, last_status: 500, last_error: 'the endpoint answered HTTP 500: database down; gave up after 1 attempt in 1 s' });
      expect(down.received).toHaveLength(1);
      expect((await org.service.database.rows<{ summary: string }>(sql`SELECT summary FROM org_activity WHERE kind = 'endpoint.delivery_failed'`)).map((row) => row.summary)).toEqual([
        `the operation.failed event could not be delivered to the endpoint down (${new URL(down.url).host}): the endpoint answered HTTP 500: database down; gave up after 1 attempt in 1 s`,
      ]);
    } finally {
      await client.close();
      await org.close();
      await down.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the organization file event_endpoints section', () => {
  it('takes only known event types, an http(s) URL and one endpoint per key', () => {
    const problems = (text: string) => {
      try {
        parseOrgFile(text);
        return [];
      } catch (error) {
        return (error as { problems: string[] }).problems;
      }
    };
    expect(problems('event_endpoints: [{ key: a, url: "https://x.example.com/", secret_env: S, events: [decision.pending, budget.threshold] }]')).toEqual([]);
    expect(problems('event_endpoints: [{ key: a, url: "https://x.example.com/", secret_env: S, events: [decision.exploded] }]')).toEqual([
      'event_endpoints.0.events.0: must be one of the event types: decision.pending, decision.resolved, decision.reminder, operation.failed, task.question, budget.threshold',
    ]);
    expect(problems('event_endpoints: [{ key: a, url: "ftp://x.example.com/", secret_env: S }]')).toHaveLength(1);
    expect(problems('event_endpoints: [{ key: a, url: "https://x.example.com/", secret_env: S }, { key: a, url: "https://y.example.com/", secret_env: S }]')).toEqual([
      'event_endpoints.1: duplicate a',
    ]);
  });
});
