/**
 * Capabilities through the runtime gate, end to end with OAuth-issued tokens and the MCP SDK client: a
 * low-risk webhook runs at once and signed; a high-risk one pauses until a person approves it in a real
 * browser; deny sends nothing; self-approval is refused; five concurrent approvals run the action once; an
 * unresolved decision expires; approve-and-remember lets the next identical call through until revoked.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectOrgMcp, type OrgMcp, settleOperation as settle } from '../helpers/org-mcp.js';
import { openBrowser, signInAs } from '../helpers/sdk-oauth.js';
import { Browserless } from '../helpers/web-client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const HOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const MEMBER = { email: 'mia@example.com', password: 'mia-password-123' };
const ACTING_SCOPES = ['integrations:read', 'integrations:act', 'governance:admin'];

describe.each(engines)('capabilities through the gate on %s', (engine) => {
  let org: TestOrg;
  let receiver: WebhookReceiver;
  let actor: OrgMcp;
  let governor: OrgMcp;
  let spaceId: string;
  const capability: Record<string, string> = {};

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    process.env.GATE_HOOK_SECRET = HOOK_SECRET;
    process.env.GATE_MEMBER_PASSWORD = MEMBER.password;
    delete process.env.GATE_UNSET_SECRET;
    process.env.GATE_BAD_SECRET = 'whsec_not base64!';
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-gate-')), 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Gate Co, client_autonomy: 2 }
people: [{ email: ${MEMBER.email}, name: Mia, role: member, password_env: GATE_MEMBER_PASSWORD }]
spaces: [{ key: general, name: General, members: [${OWNER.email}, ${MEMBER.email}] }]
capabilities:
  - key: notify_team
    name: Notify the team
    risk: low
    connector: { kind: webhook, url: ${receiver.url}/notify, secret_env: GATE_HOOK_SECRET }
    input_schema: { type: object, required: [text], properties: { text: { type: string } }, additionalProperties: false }
  - key: wire_money
    name: Wire money
    risk: high
    connector: { kind: webhook, url: ${receiver.url}/wire, secret_env: GATE_HOOK_SECRET }
    input_schema: { type: object, required: [amount], properties: { amount: { type: number } } }
  - key: paid_notify
    name: Paid notice
    risk: low
    cost: 5
    connector: { kind: webhook, url: ${receiver.url}/paid, secret_env: GATE_HOOK_SECRET }
  - key: unsigned_wire
    name: Unsigned transfer
    risk: high
    connector: { kind: webhook, url: ${receiver.url}/unsigned, secret_env: GATE_UNSET_SECRET }
  - key: badly_signed_wire
    name: Badly signed transfer
    risk: high
    connector: { kind: webhook, url: ${receiver.url}/bad, secret_env: GATE_BAD_SECRET }
  - key: retired
    name: Retired hook
    risk: low
    enabled: false
    connector: { kind: webhook, url: ${receiver.url}/retired }
rules:
  - { name: Never to the moon, when: { capability: wire_money, input: { path: /to, op: eq, value: moon } }, then: deny }
  - { name: Trial big wires, when: { capability: wire_money, input: { path: /amount, op: gt, value: 1000 } }, then: deny, mode: shadow }
`,
    );
    org = await startOrg(engine, { config: { orgFile } });
    actor = await connectOrgMcp(org, { scopes: ACTING_SCOPES, clientName: 'Acting client' });
    governor = await connectOrgMcp(org, { scopes: ['governance:admin', 'integrations:read'], clientName: 'Governing client' });
    const context = await actor.callOk('service_context');
    spaceId = context.spaces[0].id;
    for (const item of (await actor.callOk('list_capabilities')).capabilities) capability[item.key] = item.id;
  });
  afterAll(async () => {
    await actor?.close();
    await governor?.close();
    await org?.close();
    await receiver?.close();
  });
  beforeEach(() => {
    receiver.calls.length = 0;
  });

  const execute = (input: Record<string, unknown>, key = 'wire_money', extra: Record<string, unknown> = {}) =>
    actor.callOk('execute_capability', { capability_id: capability[key], input, space_id: spaceId, ...extra });

  function expectOneSignedCall(path: string, operationId: string, input: unknown) {
    expect(receiver.calls).toHaveLength(1);
    const [call] = receiver.calls;
    expect(call.path).toBe(path);
    const headers = { 'webhook-id': call.headers['webhook-id'] as string, 'webhook-timestamp': call.headers['webhook-timestamp'] as string, 'webhook-signature': call.headers['webhook-signature'] as string };
    expect(headers['webhook-id']).toBe(operationId);
    const body = new Webhook(HOOK_SECRET).verify(call.body, headers) as any;
    expect(body).toMatchObject({ type: 'capability', operation_id: operationId, capability: { key: path.slice(1) === 'notify' ? 'notify_team' : 'wire_money' }, space_id: spaceId, input });
  }

  it('lists capabilities with risk, cost and input schema, and finds them by query', async () => {
    const all = (await actor.callOk('list_capabilities')).capabilities;
    expect(all.map((item: any) => item.key)).toEqual(['badly_signed_wire', 'notify_team', 'paid_notify', 'retired', 'unsigned_wire', 'wire_money']);
    expect(all[1]).toMatchObject({ risk: 'low', cost: 0, enabled: true, connector: { kind: 'webhook' }, input_schema: { required: ['text'] } });
    expect((await actor.callOk('list_capabilities', { query: 'WIRE money' })).capabilities.map((item: any) => item.key)).toEqual(['wire_money']);
  });

  it.each([
    ['notify_team', 'allow'],
    ['wire_money', 'require_approval'],
    ['retired', 'deny'],
  ])('describes %s with the verdict were the caller to run it now: %s', async (key, verdict) => {
    const described = await actor.callOk('describe_capability', { capability_id: capability[key] });
    expect(described).toMatchObject({ key, verdict: { verdict } });
  });

  it('refuses input that does not match the schema, naming the field, and starts nothing', async () => {
    const before = await org.service.database.rows(sql`SELECT count(*)::int AS n FROM operations`);
    const error = await actor.callError('execute_capability', { capability_id: capability.notify_team, input: { text: 5, extra: 1 }, space_id: spaceId });
    expect(error.code).toBe('invalid_request');
    expect(error.details.fields).toEqual(
      expect.arrayContaining([{ field: 'input.text', message: 'must be string' }, { field: 'input.extra', message: 'is not allowed' }]),
    );
    expect(await org.service.database.rows(sql`SELECT count(*)::int AS n FROM operations`)).toEqual(before);
    expect((await actor.callError('execute_capability', { capability_id: 'cap_nope', input: {}, space_id: spaceId })).code).toBe('not_found');
  });

  it('refuses a client no longer connected as an agent, before looking for the capability', async () => {
    const lapsed = await connectOrgMcp(org, { scopes: ACTING_SCOPES, clientName: 'Lapsed client' });
    await org.service.database.rows(sql`DELETE FROM agents WHERE kind = 'client' AND client_id = ${lapsed.connected.clientId}`);
    for (const capabilityId of [capability.notify_team, 'cap_nope']) {
      const refused = await lapsed.callError('execute_capability', { capability_id: capabilityId, input: { text: 'hi' }, space_id: spaceId });
      expect(refused).toMatchObject({ code: 'forbidden', message: expect.stringContaining('not connected as an agent') });
    }
    await lapsed.close();
  });

  it('a dry run answers the verdict only and does nothing', async () => {
    const before = await org.service.database.rows(sql`SELECT count(*)::int AS n FROM operations`);
    const answer = await execute({ amount: 5000 }, 'wire_money', { dry_run: true });
    expect(answer).toEqual({
      dry_run: true,
      verdict: {
        verdict: 'require_approval',
        reasons: [expect.stringMatching(/autonomy 2 needs a person's approval for a high-risk/)],
        rule_ids: [],
        shadow: [{ rule_id: expect.any(String), name: 'Trial big wires', would: 'deny' }],
      },
    });
    expect(await org.service.database.rows(sql`SELECT count(*)::int AS n FROM operations`)).toEqual(before);
    expect(receiver.calls).toHaveLength(0);
  });

  it('runs a low-risk capability at once with one signed webhook call, and stores the verdict with its inputs', async () => {
    const operation = await execute({ text: 'hello' }, 'notify_team', { wait_seconds: 10 });
    expect(operation).toMatchObject({ kind: 'capability', status: 'succeeded', result: { status: 200, body: { received: true } } });
    expectOneSignedCall('/notify', operation.operation_id, { text: 'hello' });
    const [stored] = await org.service.database.rows<any>(sql`SELECT verdict, inputs FROM gate_verdicts WHERE operation_id = ${operation.operation_id}`);
    expect(stored.verdict).toBe('allow');
    expect(stored.inputs).toMatchObject({ capability: { key: 'notify_team', risk: 'low' }, agent: { autonomy: 2 }, input: { text: 'hello' } });
  });

  it('a standing deny rule fails the operation with denied_by_rule and sends nothing', async () => {
    const operation = await execute({ amount: 1, to: 'moon' }, 'wire_money', { wait_seconds: 10 });
    expect(operation).toMatchObject({ status: 'failed', error: { code: 'denied_by_rule', message: 'rule "Never to the moon" says deny' } });
    expect(receiver.calls).toHaveLength(0);
  });

  it('a high-risk action whose connector cannot run fails connector_failed at once: no person is asked to approve it', async () => {
    const before = (await governor.callOk('list_decisions')).decisions.length;
    const unsigned = await execute({ amount: 5 }, 'unsigned_wire', { wait_seconds: 10 });
    expect(unsigned).toMatchObject({ status: 'failed', error: { code: 'connector_failed', message: 'GATE_UNSET_SECRET is not set, so the webhook cannot be signed' } });
    expect(unsigned.decision_id ?? null).toBeNull();
    const badly = await execute({ amount: 5 }, 'badly_signed_wire', { wait_seconds: 10 });
    expect(badly).toMatchObject({ status: 'failed', error: { code: 'connector_failed', message: 'GATE_BAD_SECRET is not a valid whsec_ secret' } });
    expect((await governor.callOk('list_decisions')).decisions).toHaveLength(before);
    expect(receiver.calls).toEqual([]);
  });

  it('a disabled capability is denied', async () => {
    const operation = await execute({}, 'retired', { wait_seconds: 10 });
    expect(operation).toMatchObject({ status: 'failed', error: { code: 'denied_by_rule' } });
  });

  it('a high-risk action pauses; a person approves it in the browser and the webhook gets exactly one signed call', async () => {
    const paused = await execute({ amount: 250 }, 'wire_money', { wait_seconds: 10 });
    expect(paused).toMatchObject({ status: 'paused', decision_id: expect.any(String) });
    expect(receiver.calls).toHaveLength(0);

    const browser = await openBrowser();
    try {
      const { page } = browser;
      await page.goto(`${org.url}/inbox`);
      await signInAs(page, OWNER.email, OWNER.password);
      await page.waitForURL((url) => url.pathname === '/inbox');
      await expect(page.getByRole('navigation').getByRole('link', { name: /Inbox/ }).textContent()).resolves.toBe('Inbox 1 pending');
      const decision = page.getByRole('region', { name: 'Decision Wire money' });
      await expect(decision.textContent()).resolves.toMatch(/Acting client[\s\S]*high[\s\S]*autonomy 2[\s\S]*"amount": 250/);
      // Who asked, through what, when; the cost against the budget; where the action goes.
      const details = await decision.textContent();
      expect(details).toContain(`Asked byOwner (${OWNER.email}), through the client Acting client (client id ${actor.connected.clientId}), `);
      expect(details).toContain('Cost0 units (no monthly budget)');
      expect(details).toContain(`Sends to${receiver.url}/wire`);
      await decision.getByLabel('Note (optional)').fill('fine this once');
      await decision.getByRole('button', { name: 'Approve' }).click();
      // Approve lands on what became of the action; the page refreshes itself until it has ended.
      await page.waitForURL((url) => url.pathname === `/inbox/decisions/${paused.decision_id}`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Wire money: approved');
      await expect.poll(() => page.getByRole('status').textContent(), { timeout: 15_000 }).toBe('succeeded');
      await expect(page.getByText('"received": true').count()).resolves.toBe(1);
      await expect(page.getByText('by Owner').count()).resolves.toBe(1);
    } finally {
      await browser.close();
    }

    const done = await settle(actor, paused.operation_id);
    expect(done).toMatchObject({ status: 'succeeded', decision_id: paused.decision_id });
    expectOneSignedCall('/wire', paused.operation_id, { amount: 250 });
    const resolved = (await governor.callOk('list_decisions', { status: 'approved' })).decisions.find((item: any) => item.id === paused.decision_id);
    expect(resolved).toMatchObject({ status: 'approved', note: 'fine this once', resolved_by: { name: 'Owner', via: 'inbox' }, action: { capability_key: 'wire_money', input: { amount: 250 } } });
    expect(resolved.resolved_by.client).toBeUndefined();
    // get_operation says who decided and where.
    expect(done.decision).toEqual({ status: 'approved', note: 'fine this once', resolved_by: { person_id: expect.any(String), name: 'Owner', via: 'inbox' } });
  });

  it('deny fails the operation with denied and sends nothing', async () => {
    const paused = await execute({ amount: 300 }, 'wire_money', { wait_seconds: 10 });
    const listed = (await governor.callOk('list_decisions')).decisions;
    expect(listed.map((item: any) => item.id)).toEqual([paused.decision_id]);
    expect(listed[0]).toMatchObject({ status: 'pending', risk: 'high', agent: { name: 'Acting client (connected application)' }, operation_id: paused.operation_id });
    const answer = await governor.callOk('resolve_decision', { decision_id: paused.decision_id, outcome: 'deny', note: 'no' });
    expect(answer.decision).toMatchObject({ id: paused.decision_id, status: 'denied', note: 'no' });
    expect(answer.operation).toMatchObject({ status: 'failed', error: { code: 'denied' } });
    expect(await settle(actor, paused.operation_id)).toMatchObject({ status: 'failed', error: { code: 'denied' } });
    expect(receiver.calls).toHaveLength(0);
    const again = await governor.callError('resolve_decision', { decision_id: paused.decision_id, outcome: 'approve' });
    expect(again).toMatchObject({ code: 'invalid_state', message: 'the decision is already denied, so it cannot be resolved again' });
  });

  it('the client whose action it is cannot resolve it, whatever its scopes', async () => {
    const paused = await execute({ amount: 400 }, 'wire_money', { wait_seconds: 10 });
    expect((await actor.callOk('list_decisions')).decisions).toEqual([]);
    const refused = await actor.callError('resolve_decision', { decision_id: paused.decision_id, outcome: 'approve' });
    expect(refused.code).toBe('forbidden');
    expect(await settle(actor, paused.operation_id)).toMatchObject({ status: 'paused' });
    await governor.callOk('resolve_decision', { decision_id: paused.decision_id, outcome: 'deny' });
    expect(receiver.calls).toHaveLength(0);
  });

  it('routes a decision to the responsible person and owners/admins only: another member neither sees nor resolves it', async () => {
    const paused = await execute({ amount: 450 }, 'wire_money', { wait_seconds: 10 });
    const member = await connectOrgMcp(org, { scopes: ['governance:admin'], email: MEMBER.email, password: MEMBER.password });
    try {
      expect((await member.callOk('list_decisions', { status: 'all' })).decisions).toEqual([]);
      expect((await member.callError('resolve_decision', { decision_id: paused.decision_id, outcome: 'approve' })).code).toBe('not_found');
      const browser = new Browserless(org.url);
      await browser.signIn(MEMBER.email, MEMBER.password);
      const inbox = await browser.get('/inbox');
      expect(inbox.text).toContain('Nothing is waiting for you.');
      expect(inbox.text).not.toContain(paused.decision_id);
    } finally {
      await member.close();
    }
    expect(await settle(actor, paused.operation_id)).toMatchObject({ status: 'paused' });
    await governor.callOk('resolve_decision', { decision_id: paused.decision_id, outcome: 'deny' });
    expect(receiver.calls).toHaveLength(0);
  });

  it('five concurrent approvals run the action exactly once; the others get invalid_state', async () => {
    const paused = await execute({ amount: 500 }, 'wire_money', { wait_seconds: 10 });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        governor.client.callTool({ name: 'resolve_decision', arguments: { decision_id: paused.decision_id, outcome: 'approve' } }),
      ),
    );
    const bodies = answers.map((answer: any) => ({ isError: !!answer.isError, body: JSON.parse(answer.content[0].text) }));
    expect(bodies.filter((answer) => !answer.isError)).toHaveLength(1);
    expect(bodies.filter((answer) => answer.isError).map((answer) => answer.body.error.code)).toEqual(Array(4).fill('invalid_state'));
    expect(await settle(actor, paused.operation_id)).toMatchObject({ status: 'succeeded' });
    expectOneSignedCall('/wire', paused.operation_id, { amount: 500 });
  });

  it('a decision left past its decision_ttl expires and its operation fails expired', async () => {
    await org.service.database.db.execute(sql`UPDATE organization SET decision_ttl_seconds = 1`);
    try {
      const paused = await execute({ amount: 600 }, 'wire_money', { wait_seconds: 10 });
      expect(paused.status).toBe('paused');
      let operation = paused;
      for (let attempt = 0; attempt < 100 && operation.status === 'paused'; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        operation = await actor.callOk('get_operation', { operation_id: paused.operation_id });
      }
      expect(operation).toMatchObject({ status: 'failed', error: { code: 'expired' } });
      const [expired] = (await governor.callOk('list_decisions', { status: 'expired' })).decisions;
      expect(expired).toMatchObject({ id: paused.decision_id, status: 'expired' });
      expect((await governor.callError('resolve_decision', { decision_id: paused.decision_id, outcome: 'approve' })).code).toBe('invalid_state');
      expect(receiver.calls).toHaveLength(0);
    } finally {
      await org.service.database.db.execute(sql`UPDATE organization SET decision_ttl_seconds = 604800`);
    }
  });

  it('approve and remember lets the next identical call run without a pause, until the person revokes the rule', async () => {
    const first = await execute({ amount: 700 }, 'wire_money', { wait_seconds: 10 });
    const until = new Date(Date.now() + 86_400_000).toISOString();
    await governor.callOk('resolve_decision', { decision_id: first.decision_id, outcome: 'approve', remember: { until, same_input: true } });
    expect(await settle(actor, first.operation_id)).toMatchObject({ status: 'succeeded' });

    const second = await execute({ amount: 700 }, 'wire_money', { wait_seconds: 10 });
    expect(second).toMatchObject({ status: 'succeeded' });
    // Remembered for that input only: another amount still pauses.
    const other = await execute({ amount: 701 }, 'wire_money', { wait_seconds: 10 });
    expect(other.status).toBe('paused');
    await governor.callOk('resolve_decision', { decision_id: other.decision_id, outcome: 'deny' });

    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    const rules = await browser.get('/rules');
    expect(rules.status).toBe(200);
    expect(rules.text).toContain('Acting client');
    expect(rules.text).toContain('Wire money');
    const revoke = await browser.post('/rules/revoke', { csrf: browser.hidden(rules.text, 'csrf'), rule_id: browser.hidden(rules.text, 'rule_id') });
    expect(revoke.status).toBe(303);
    expect((await browser.get('/rules')).text).toContain('No learned rules.');

    const third = await execute({ amount: 700 }, 'wire_money', { wait_seconds: 10 });
    expect(third.status).toBe('paused');
    await governor.callOk('resolve_decision', { decision_id: third.decision_id, outcome: 'deny' });
    expect(receiver.calls.map((call) => call.path)).toEqual(['/wire', '/wire']);
  });

  it('a cost over the agent\'s remaining monthly budget pauses for approval, and the approved run is charged', async () => {
    const agentId = (await execute({ text: 'x' }, 'notify_team', { wait_seconds: 10 })).agent_id;
    await org.service.database.db.execute(sql`UPDATE agents SET budget = 8 WHERE id = ${agentId}`);
    try {
      const first = await execute({}, 'paid_notify', { wait_seconds: 10 });
      expect(first.status).toBe('succeeded');
      const second = await execute({}, 'paid_notify', { wait_seconds: 10 });
      expect(second.status).toBe('paused');
      const [decision] = (await governor.callOk('list_decisions')).decisions;
      expect(decision.reasons).toEqual(["the cost 5 is over the agent's remaining budget of 3 units this month"]);
      await governor.callOk('resolve_decision', { decision_id: second.decision_id, outcome: 'approve' });
      const approved = await settle(actor, second.operation_id);
      expect(approved).toMatchObject({ status: 'succeeded' });
      // A client resolved it: the record names the person and the client, never "a person in the inbox".
      expect(approved.decision.resolved_by).toEqual({
        person_id: expect.any(String),
        name: 'Owner',
        via: 'client',
        client: { id: governor.connected.clientId, name: 'Governing client' },
      });
      const usage = await org.service.database.rows<{ units: number }>(sql`SELECT used AS units FROM agent_usage WHERE agent_id = ${agentId}`);
      expect(usage).toEqual([{ units: 10 }]);
    } finally {
      await org.service.database.db.execute(sql`UPDATE agents SET budget = NULL WHERE id = ${agentId}`);
    }
  });

  it('the inbox and rules pages refuse a form without its CSRF token and change nothing', async () => {
    const paused = await execute({ amount: 800 }, 'wire_money', { wait_seconds: 10 });
    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    const answer = await browser.post('/inbox/resolve', { csrf: 'forged', decision_id: paused.decision_id, outcome: 'approve' });
    expect(answer.status).toBe(403);
    expect(await settle(actor, paused.operation_id)).toMatchObject({ status: 'paused' });
    await governor.callOk('resolve_decision', { decision_id: paused.decision_id, outcome: 'deny' });
    expect(receiver.calls).toHaveLength(0);
  });
});
