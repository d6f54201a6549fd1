/**
 * DESIGN 4.4 "Budgets hold exactly": the budget check and the charge are one atomic step, so many executions
 * at once — on one service, or spread over three services with their own connection pools on one PostgreSQL
 * database — run exactly as many actions as the budget pays for; the rest pause for a person, whose approval
 * still overrides the budget.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, postgresUrl, testDatabase, type Engine, type TestDatabase } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient } from '../helpers/oauth-flow.js';
import { openOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const BUDGET = 5;
const CALLS = 30;

async function budgetOrgFile(receiver: WebhookReceiver): Promise<string> {
  process.env.BUDGET_HOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-budget-')), 'org.yaml');
  await writeFile(
    file,
    `organization: { name: Budget Co, client_autonomy: 2 }
spaces: [{ key: general, name: General, members: [${OWNER.email}] }]
capabilities:
  - key: metered_ping
    name: Metered ping
    risk: low
    cost: 1
    connector: { kind: webhook, url: ${receiver.url}/ping, secret_env: BUDGET_HOOK_SECRET }
`,
  );
  return file;
}

/** Runs CALLS executions at once, round robin over `sessions`, and counts how each ended. */
async function executeAtOnce(sessions: OrgMcp[], capabilityId: string, spaceId: string) {
  const results = await Promise.all(
    Array.from({ length: CALLS }, (_, index) =>
      sessions[index % sessions.length].callOk('execute_capability', { capability_id: capabilityId, input: { n: index }, space_id: spaceId, wait_seconds: 20 }),
    ),
  );
  const count = (status: string) => results.filter((result) => result.status === status).length;
  return { results, succeeded: count('succeeded'), paused: count('paused') };
}

async function usedThisMonth(org: TestOrg, agentId: string): Promise<number> {
  const rows = await org.service.database.rows<{ used: number }>(sql`SELECT used FROM agent_usage WHERE agent_id = ${agentId}`);
  return Number(rows[0]?.used ?? 0);
}

async function limitClientAgent(org: TestOrg): Promise<string> {
  const [agent] = await org.service.database.rows<{ id: string }>(sql`SELECT id FROM agents WHERE kind = 'client' AND name = 'Busy client'`);
  await org.service.database.db.execute(sql`UPDATE agents SET budget = ${BUDGET} WHERE id = ${agent.id}`);
  return agent.id;
}

describe.each(engines)('a budget under concurrent executions on %s', (engine: Engine) => {
  let receiver: WebhookReceiver;
  let org: TestOrg;
  /** One client's token in several MCP sessions, as a client with parallel tool calls opens them. */
  const sessions: OrgMcp[] = [];
  let actor: OrgMcp;
  let governor: OrgMcp;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    org = await startOrg(engine, { config: { orgFile: await budgetOrgFile(receiver) } });
    const connected = await connectClient(org, { scopes: ['integrations:read', 'integrations:act'], clientName: 'Busy client' });
    for (let index = 0; index < 6; index += 1) sessions.push(await openOrgMcp(org, connected));
    actor = sessions[0];
    governor = await openOrgMcp(org, await connectClient(org, { scopes: ['governance:admin'], clientName: 'Governing client' }));
  });
  afterAll(async () => {
    for (const session of sessions) await session.close();
    await governor?.close();
    await org?.close();
    await receiver?.close();
  });

  it(`runs exactly ${BUDGET} of ${CALLS} parallel executions within a budget of ${BUDGET}; the rest pause, and an approval overrides the budget`, { timeout: 90_000 }, async () => {
    const agentId = await limitClientAgent(org);
    const spaceId = (await actor.callOk('service_context')).spaces[0].id;
    const [capability] = (await actor.callOk('list_capabilities')).capabilities;

    const { results, succeeded, paused } = await executeAtOnce(sessions, capability.id, spaceId);
    expect({ succeeded, paused }).toEqual({ succeeded: BUDGET, paused: CALLS - BUDGET });
    expect(receiver.calls).toHaveLength(BUDGET);
    expect(await usedThisMonth(org, agentId)).toBe(BUDGET);

    // Each paused one says why, as the budget step does.
    const decisions = (await governor.callOk('list_decisions')).decisions;
    expect(decisions).toHaveLength(CALLS - BUDGET);
    for (const decision of decisions) expect(decision.reasons).toEqual(["the cost 1 is over the agent's remaining budget of 0 units this month"]);

    // A person's approval still overrides the budget, and the approved run is charged.
    const held = results.find((result) => result.status === 'paused');
    await governor.callOk('resolve_decision', { decision_id: held.decision_id, outcome: 'approve' });
    await expect.poll(() => receiver.calls.length, { timeout: 10_000 }).toBe(BUDGET + 1);
    await expect.poll(() => usedThisMonth(org, agentId), { timeout: 10_000 }).toBe(BUDGET + 1);
  });
});

describe.runIf(postgresUrl)('a budget under concurrent executions on three services sharing one PostgreSQL database', () => {
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  const orgs: TestOrg[] = [];
  const sessions: OrgMcp[] = [];

  beforeAll(async () => {
    database = testDatabase('postgres');
    receiver = await startWebhookReceiver();
    const orgFile = await budgetOrgFile(receiver);
    orgs.push(await startOrg('postgres', { database, config: { orgFile } }));
    for (let index = 1; index < 3; index += 1) {
      orgs.push(await startOrg('postgres', { database, config: { orgFile, publicUrl: orgs[0].url, authPublicUrl: orgs[0].url } }));
    }
    const connected = await connectClient(orgs[0], { scopes: ['integrations:read', 'integrations:act'], clientName: 'Busy client' });
    for (const org of orgs) sessions.push(await openOrgMcp(org, connected));
  });
  afterAll(async () => {
    for (const session of sessions) await session.close();
    for (const org of orgs.reverse()) await org.close();
    await receiver?.close();
    await database?.drop();
  });

  it(`runs exactly ${BUDGET} of ${CALLS} executions spread over the three`, { timeout: 90_000 }, async () => {
    const agentId = await limitClientAgent(orgs[0]);
    const spaceId = (await sessions[0].callOk('service_context')).spaces[0].id;
    const [capability] = (await sessions[0].callOk('list_capabilities')).capabilities;

    const { succeeded, paused } = await executeAtOnce(sessions, capability.id, spaceId);
    expect({ succeeded, paused }).toEqual({ succeeded: BUDGET, paused: CALLS - BUDGET });
    expect(receiver.calls).toHaveLength(BUDGET);
    expect(await usedThisMonth(orgs[0], agentId)).toBe(BUDGET);
  });
});
