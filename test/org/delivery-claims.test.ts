/**
 * DESIGN 4.5 and issue 16 item 6: a delivery attempt is counted compare-and-set on the count its run read, so a
 * second claim of the same attempt — another process holding a stale job — sends nothing.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/platform/database.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptDelivery } from '../../src/org/delivery/deliveries.js';
import { engines, waitingBehind } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { newWebhookSecret, startReceiver, type Receiver } from '../helpers/agents-at-work.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';

describe.each(engines)('two claims of one delivery attempt on %s', (engine) => {
  let org: TestOrg;
  let receiver: Receiver;
  let mcp: OrgMcp;

  beforeAll(async () => {
    // Every attempt answers 503: the delivery stays pending, its next attempt queued.
    receiver = await startReceiver(() => ({ status: 503 }));
    process.env.CLAIMS_AGENT_SECRET = newWebhookSecret();
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-claims-')), 'org.yaml');
    await writeFile(
      orgFile,
      `spaces: [{ key: general, name: General, members: [${OWNER.email}] }]
agents: [{ key: flaky, name: Flaky, delivery: { kind: webhook, url: "${receiver.url}", secret_env: CLAIMS_AGENT_SECRET } }]
`,
    );
    org = await startOrg(engine, { config: { orgFile, delivery: { windowSeconds: 600, timeoutSeconds: 5 } } });
    mcp = await connectOrgMcp(org);
  });
  afterAll(async () => {
    await mcp?.close();
    await org?.close();
    await receiver?.close();
  });

  it('sends the attempt once when two runs claim it at the same time', async () => {
    const [agent] = await org.service.database.rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'flaky'`);
    const spaceId = (await mcp.callOk('service_context')).spaces[0].id;
    const operation = await mcp.callOk('message_agent', { agent_id: agent.id, text: 'hello', space_id: spaceId });
    await receiver.waitForCount(1);
    // Only the two runs below may attempt it.
    await org.service.jobs.stop();
    const [delivery] = await org.service.database.rows<{ id: string; attempts: number }>(
      sql`SELECT id, attempts FROM deliveries WHERE operation_id = ${operation.operation_id}`,
    );
    await expect.poll(async () => (await org.service.database.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM deliveries WHERE id = ${delivery.id} AND last_error IS NOT NULL`))[0].n, { timeout: 10_000 }).toBe(1);

    const before = receiver.received.length;
    const [counted] = await org.service.database.rows<{ attempts: number }>(sql`SELECT attempts FROM deliveries WHERE id = ${delivery.id}`);

    await bothReadThenClaim(org, delivery.id);

    expect(receiver.received.length - before).toBe(1);
    const [after] = await org.service.database.rows<{ attempts: number }>(sql`SELECT attempts FROM deliveries WHERE id = ${delivery.id}`);
    expect(Number(after.attempts)).toBe(Number(counted.attempts) + 1);
  });
});

/**
 * Two runs of one attempt, each counting on the delivery as it read it before either counted. On PGlite (one
 * connection, statements in the order asked) both reads come before either count. On PostgreSQL the runs have
 * connections of their own, and under load the second could read after the first committed its count — and then
 * rightly send the next attempt; so the delivery's row is held locked until both runs have read it and wait to
 * count.
 */
async function bothReadThenClaim(org: TestOrg, deliveryId: string): Promise<void> {
  const claim = () => attemptDelivery(org.service.ctx, deliveryId);
  if (org.service.database.engine === 'pglite') {
    await Promise.all([claim(), claim()]);
    return;
  }
  let runs: Promise<unknown> | undefined;
  await org.service.database.db.transaction(async (tx) => {
    const [{ pid }] = await queryRows<{ pid: number }>(tx, sql`SELECT pg_backend_pid() AS pid FROM deliveries WHERE id = ${deliveryId} FOR UPDATE`);
    runs = Promise.all([claim(), claim()]);
    await expect
      .poll(async () => (await org.service.database.rows<{ n: number }>(waitingBehind(pid)))[0].n, { timeout: 10_000 })
      .toBe(2);
  });
  await runs;
}

