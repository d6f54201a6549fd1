/**
 * DESIGN 4.4 and 4.5: an agent runs capabilities through the agent API under its delivery's callback, and the
 * same gate decides as for a client — with the agent's own autonomy and monthly budget. A budget that would
 * be overrun pauses the action for a person.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCapability } from '../../src/org/capabilities/execute.js';
import { findOperation } from '../../src/org/operations/operations.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { newWebhookSecret, startReceiver, type Receiver } from '../helpers/agents-at-work.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const AGENT_SECRET = newWebhookSecret();
const HOOK_SECRET = newWebhookSecret();

describe.each(engines)('an agent running capabilities through the gate on %s', (engine) => {
  let org: TestOrg;
  let agent: Receiver;
  let world: WebhookReceiver;
  let mcp: OrgMcp;
  let capabilities: Record<string, string>;
  let callback: { url: string; token: string };

  beforeAll(async () => {
    // The agent takes the message and answers later (202), so its callback stays open for the test.
    agent = await startReceiver(() => ({ status: 202 }));
    world = await startWebhookReceiver();
    process.env.TEST_WORKER_AGENT_SECRET = AGENT_SECRET;
    process.env.TEST_WORLD_HOOK_SECRET = HOOK_SECRET;
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-agent-gate-')), 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Gate Co }
spaces:
  - { key: general, name: General, members: [${OWNER.email}] }
agents:
  - { key: worker, name: Worker, autonomy: 2, budget: 3, responsible: ${OWNER.email}, delivery: { kind: webhook, url: "${agent.url}", secret_env: TEST_WORKER_AGENT_SECRET } }
capabilities:
  - key: notify
    name: Notify the team
    risk: low
    cost: 2
    connector: { kind: webhook, url: ${world.url}/notify, secret_env: TEST_WORLD_HOOK_SECRET }
    input_schema: { type: object, required: [text], properties: { text: { type: string } }, additionalProperties: false }
  - key: deploy
    name: Deploy
    risk: high
    connector: { kind: webhook, url: ${world.url}/deploy, secret_env: TEST_WORLD_HOOK_SECRET }
`,
    );
    org = await startOrg(engine, { config: { orgFile } });
    const rows = await org.service.database.rows<{ id: string; key: string }>(sql`SELECT id, key FROM capabilities`);
    capabilities = Object.fromEntries(rows.map((row) => [row.key, row.id]));
    mcp = await connectOrgMcp(org);
    const context = await mcp.callOk('service_context');
    const worker = (await mcp.callOk('list_agents')).agents.find((entry: { key: string }) => entry.key === 'worker');
    const started = await mcp.callOk('message_agent', { agent_id: worker.id, text: 'tidy up', space_id: context.spaces[0].id, wait_seconds: 0 });
    const [delivery] = await agent.waitForCount(1);
    expect(delivery.body.operation_id).toBe(started.operation_id);
    callback = delivery.body.callback;
  });
  afterAll(async () => {
    await mcp?.close();
    await org?.close();
    await agent?.close();
    await world?.close();
  });

  const execute = (key: string, body: Record<string, unknown>, token = callback.token) =>
    fetch(`${callback.url}/capabilities/${capabilities[key]}/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (response) => ({ status: response.status, body: await response.json() }));

  it('refuses a wrong callback token with 401 and runs nothing', async () => {
    const refused = await execute('notify', { input: { text: 'x' }, idempotency_key: 'bad-token' }, 'not-the-token');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
    expect(world.calls).toHaveLength(0);
  });

  it('answers a dry run with the verdict and does nothing', async () => {
    const answer = await execute('notify', { input: { text: 'dry' }, idempotency_key: 'dry-1', dry_run: true });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ dry_run: true, verdict: { verdict: 'allow' } });
    expect(world.calls).toHaveLength(0);
  });

  it('refuses input that does not fit the capability, naming the field', async () => {
    const refused = await execute('notify', { input: { text: 5 }, idempotency_key: 'bad-input' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_request');
    expect(JSON.stringify(refused.body.error)).toContain('input.text');
  });

  it('runs a low-risk capability within its autonomy and budget once, also when retried with the key', async () => {
    const first = await execute('notify', { input: { text: 'hello' }, idempotency_key: 'notify-1' });
    expect(first.status).toBe(200);
    expect(first.body.operation).toMatchObject({ kind: 'capability', status: 'succeeded' });
    const again = await execute('notify', { input: { text: 'hello' }, idempotency_key: 'notify-1' });
    expect(again.body.operation.operation_id).toBe(first.body.operation.operation_id);
    expect(world.calls.filter((call) => call.path === '/notify')).toHaveLength(1);
    const worker = (await mcp.callOk('list_agents')).agents.find((entry: { key: string }) => entry.key === 'worker');
    expect(worker.usage).toMatchObject({ used: 2, budget: 3, remaining: 1 });
  });

  it('charges an operation once when its runner runs again after a crash, and resends with the same webhook-id', async () => {
    const [{ id }] = await org.service.database.rows<{ id: string }>(sql`SELECT id FROM operations WHERE kind = 'capability' AND status = 'succeeded'`);
    const operation = await findOperation(org.service.database.db, id);
    await runCapability(org.service.ctx, operation!);
    const notified = world.calls.filter((call) => call.path === '/notify');
    expect(notified).toHaveLength(2);
    expect(notified[1].headers['webhook-id']).toBe(notified[0].headers['webhook-id']);
    const [usage] = await org.service.database.rows<{ used: number }>(sql`SELECT used FROM agent_usage`);
    expect(usage.used).toBe(2);
  });

  it('pauses what its budget cannot pay for, and what its autonomy does not cover', async () => {
    const overBudget = await execute('notify', { input: { text: 'again' }, idempotency_key: 'notify-2' });
    expect(overBudget.body.operation).toMatchObject({ status: 'paused', decision_id: expect.any(String) });
    const risky = await execute('deploy', { input: {}, idempotency_key: 'deploy-1' });
    expect(risky.body.operation).toMatchObject({ status: 'paused', decision_id: expect.any(String) });
    expect(world.calls.filter((call) => call.path !== '/notify')).toHaveLength(0);
    expect(world.calls).toHaveLength(2);
    const pending = await mcp.callOk('list_decisions', {});
    expect(pending.decisions.map((decision: { operation_id: string }) => decision.operation_id)).toEqual(
      expect.arrayContaining([overBudget.body.operation.operation_id, risky.body.operation.operation_id]),
    );
  });
});
