/**
 * The console's home as people see it: the owner is shown the decision waiting for them, the paused and the
 * failed operation, the agents' budgets and the latest activity; a member of another space sees none of it.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordActivity } from '../../src/org/activity/records.js';
import { chargeAgent } from '../../src/org/agents/usage.js';
import { agents } from '../../src/org/schema.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectOrgMcp, type OrgMcp, settleOperation as settle } from '../helpers/org-mcp.js';
import { Browserless } from '../helpers/web-client.js';

const MEMBER = { email: 'mia@example.com', password: 'mia-password-123' };

describe.each(engines)('the console home on %s', (engine) => {
  let org: TestOrg;
  let actor: OrgMcp;
  const operationIds: Record<string, string> = {};

  beforeAll(async () => {
    process.env.HOME_TEST_MEMBER_PASSWORD = MEMBER.password;
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-home-')), 'org.yaml');
    // Port 9 (discard) on loopback refuses the connection: the hook fails at once.
    await writeFile(
      orgFile,
      `organization: { name: Home Co, client_autonomy: 2 }
people: [{ email: ${MEMBER.email}, name: Mia, role: member, password_env: HOME_TEST_MEMBER_PASSWORD }]
spaces:
  - { key: finance, name: Finance, members: [${OWNER.email}] }
  - { key: website, name: Website, members: [${MEMBER.email}] }
agents:
  - { key: scribe, name: Scribe, autonomy: 2, responsible: ${OWNER.email}, budget: 100 }
capabilities:
  - { key: wire_money, name: Wire money, risk: high, connector: { kind: webhook, url: "http://127.0.0.1:9/wire" } }
  - { key: ping_bank, name: Ping the bank, risk: low, connector: { kind: webhook, url: "http://127.0.0.1:9/ping" } }
`,
    );
    org = await startOrg(engine, { config: { orgFile } });
    actor = await connectOrgMcp(org, { scopes: ['integrations:read', 'integrations:act', 'task:write'], clientName: 'Treasury bot' });
    const context = await actor.callOk('service_context');
    const finance = context.spaces.find((space: any) => space.name === 'Finance').id;
    const capabilities = Object.fromEntries((await actor.callOk('list_capabilities')).capabilities.map((item: any) => [item.key, item.id]));
    const paused = await actor.callOk('execute_capability', { capability_id: capabilities.wire_money, input: { amount: 5000 }, space_id: finance });
    const waiting = await settle(actor, paused.operation_id);
    expect(waiting.status).toBe('paused');
    const failed = await actor.callOk('execute_capability', { capability_id: capabilities.ping_bank, input: {}, space_id: finance });
    expect((await settle(actor, failed.operation_id)).status).toBe('failed');
    Object.assign(operationIds, { paused: paused.operation_id, failed: failed.operation_id, decision: waiting.decision_id });
    const scribeId = context.agents.find((agent: any) => agent.name === 'Scribe').id;
    operationIds.taskId = (await actor.callOk('create_task', { space_id: finance, title: 'Reconcile the ledger', assignee_agent_id: scribeId })).id;
    const { db } = org.service.ctx;
    const [scribe] = await db.select({ id: agents.id }).from(agents).where(eq(agents.key, 'scribe'));
    await chargeAgent(db, scribe.id, 85);
    await db.transaction((tx) => recordActivity(tx, { kind: 'memory.written', summary: 'wrote the quarterly figures', spaceId: finance, subject: 'mem_quarterly' }));
  });
  afterAll(async () => {
    await actor?.close();
    await org?.close();
  });

  it('shows the owner what waits for them, the paused and failed work, the budgets and the latest activity', async () => {
    const owner = new Browserless(org.url);
    await owner.signIn(OWNER.email, OWNER.password);
    const page = await owner.get('/');
    expect(page.status).toBe(200);
    const needs = page.text.slice(page.text.indexOf('Needs you now'), page.text.indexOf('In progress'));
    expect(needs).toContain('Wire money');
    expect(needs).toContain('high risk');
    // Decide opens that decision's own page, with Approve and Deny.
    expect(needs).toContain(`<a href="/inbox/decisions/${operationIds.decision}">Decide</a>`);
    expect((await owner.get(`/inbox/decisions/${operationIds.decision}`)).text).toContain('Approve');
    const inProgress = page.text.slice(page.text.indexOf('In progress'), page.text.indexOf('Failed in the last day'));
    expect(inProgress).toContain('paused');
    // Each operation says what it is about: its capability's name, its task's title.
    expect(inProgress).toContain(`capability <a href="/operations/${operationIds.paused}">Wire money</a>`);
    const taskOperation = /task <a href="(\/operations\/op_[^"]+)">Reconcile the ledger<\/a>/.exec(page.text)?.[1];
    expect(taskOperation).toBeDefined();
    // The task's operation links back to its task.
    const opened = await owner.get(taskOperation!);
    expect(opened.text).toContain('<h1>task operation: Reconcile the ledger <span');
    expect(opened.text).toContain(`<dt>Task</dt><dd><a href="/tasks/${operationIds.taskId}">Reconcile the ledger</a></dd>`);
    const failed = page.text.slice(page.text.indexOf('Failed in the last day'), page.text.indexOf('Budgets this month'));
    expect(failed).toContain(`capability <a href="/operations/${operationIds.failed}">Ping the bank</a>`);
    expect(failed).toContain('Finance');
    const budgets = page.text.slice(page.text.indexOf('Budgets this month'), page.text.indexOf('Latest activity'));
    expect(budgets).toContain('Scribe');
    expect(budgets).toContain('85 (85 %)');
    // The latest activity links what each entry is about.
    expect(page.text).toContain('wrote the quarterly figures · <a href="/memory/mem_quarterly">memory item</a>');
  });

  it('shows a member of another space none of it', async () => {
    const mia = new Browserless(org.url);
    await mia.signIn(MEMBER.email, MEMBER.password);
    const page = await mia.get('/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Hello, Mia');
    expect(page.text).toContain('Nothing is waiting for you.');
    expect(page.text).toContain('No operation is running or waiting.');
    expect(page.text).toContain('No operation failed in the last day.');
    for (const hidden of ['Wire money', 'Ping the bank', 'Reconcile the ledger', 'Finance', 'wrote the quarterly figures']) expect(page.text).not.toContain(hidden);
  });
});
