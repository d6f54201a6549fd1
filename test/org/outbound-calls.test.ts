/**
 * DESIGN 4.4, "one signed poster": what a careless or hostile receiver can do to the organization's outbound
 * calls — capability webhooks, the content connector and agent deliveries — and what it cannot:
 *
 * - a redirect (303, 307) to an internal address is never followed: the capability fails `connector_failed`
 *   (the agent's delivery fails at once), naming the status, and the internal address is never called;
 * - an answer of 16 MiB is not stored: past 1 MiB the call fails ("too large") and get_operation stays small;
 * - a receiver that sends its headers and stalls the body gets the action once, and it fails `connector_failed`;
 * - `Retry-After` on 429 and 503 (seconds or an HTTP date) is honoured, with the same webhook-id;
 * - a refusal carries the receiver's own error text, bounded.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';

interface Hit {
  path: string;
  webhookId: string | undefined;
  at: number;
}

/** A receiver with one behaviour per path, and an "internal" service that must never be reached. */
async function startHostileReceiver() {
  const hits: Hit[] = [];
  const internalHits: string[] = [];
  const stalled = new Set<http.ServerResponse>();
  const internal = http.createServer((request, response) => {
    internalHits.push(`${request.method} ${request.url}`);
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ secret: 'internal data' }));
  });
  await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
  const internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}/admin`;
  const seen = new Map<string, number>();

  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const route = (request.url ?? '/').split('?')[0];
      hits.push({ path: route, webhookId: request.headers['webhook-id'] as string | undefined, at: Date.now() });
      const times = (seen.get(route) ?? 0) + 1;
      seen.set(route, times);
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
      if (route.endsWith('/redirect-303')) return json(303, {}, { location: internalUrl });
      if (route.endsWith('/redirect-307') || route.startsWith('/content/')) return json(307, {}, { location: internalUrl });
      if (route.endsWith('/huge')) {
        // 16 MiB without a content-length: only a bounded read stops it.
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"result": "');
        const chunk = 'x'.repeat(64 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < 256) {
            sent += 1;
            if (!response.write(chunk)) return void response.once('drain', pump);
          }
          response.end('"}');
        };
        response.on('error', () => undefined);
        return pump();
      }
      if (route.endsWith('/stall')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"status": "work');
        stalled.add(response);
        return;
      }
      if (route.endsWith('/limited')) return times === 1 ? json(429, { error: 'slow down' }, { 'retry-after': '2' }) : json(200, { result: { done: times } });
      if (route.endsWith('/unavailable')) {
        return times === 1 ? json(503, { error: 'maintenance' }, { 'retry-after': new Date(Date.now() + 3000).toUTCString() }) : json(200, { result: { done: times } });
      }
      if (route.endsWith('/refuse')) return json(422, { error: { code: 'bad_amount', message: `the amount must be positive\u0000${'!'.repeat(2000)}` } });
      return json(404, { error: 'no such route' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    internalHits,
    hitsOf: (suffix: string) => hits.filter((hit) => hit.path.endsWith(suffix)),
    async close() {
      for (const response of stalled) response.destroy();
      server.closeAllConnections();
      internal.closeAllConnections();
      await Promise.all([new Promise((resolve) => server.close(resolve)), new Promise((resolve) => internal.close(resolve))]);
    },
  };
}

describe.each(engines)('outbound calls to careless and hostile receivers on %s', (engine) => {
  let receiver: Awaited<ReturnType<typeof startHostileReceiver>>;
  let org: TestOrg;
  let mcp: OrgMcp;
  let spaceId: string;
  const capability: Record<string, string> = {};
  const agent: Record<string, string> = {};

  beforeAll(async () => {
    receiver = await startHostileReceiver();
    process.env.OUTBOUND_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
    const hook = (name: string) => `{ kind: webhook, url: "${receiver.url}/${name}", secret_env: OUTBOUND_SECRET }`;
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-outbound-')), 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Outbound Co, client_autonomy: 3 }
spaces: [{ key: general, name: General, members: [${OWNER.email}] }]
agents:
  - { key: moved, name: Moved, delivery: ${hook('agent/redirect-307')} }
  - { key: chatty, name: Chatty, delivery: ${hook('agent/huge')} }
  - { key: busy, name: Busy, delivery: ${hook('agent/limited')} }
capabilities:
  - { key: see_other, risk: low, connector: ${hook('redirect-303')} }
  - { key: temporary, risk: low, connector: ${hook('redirect-307')} }
  - { key: huge, risk: low, connector: ${hook('huge')} }
  - { key: stall, risk: low, connector: ${hook('stall')} }
  - { key: limited, risk: low, connector: ${hook('limited')} }
  - { key: unavailable, risk: low, connector: ${hook('unavailable')} }
  - { key: refuse, risk: low, connector: ${hook('refuse')} }
  - { key: publish, risk: low, connector: { kind: content, action: publish_blog_post } }
`,
    );
    org = await startOrg(engine, {
      config: { orgFile, delivery: { windowSeconds: 8, timeoutSeconds: 3 }, content: { url: `${receiver.url}/content`, apiSecret: 'content-secret', beside: false } },
    });
    mcp = await connectOrgMcp(org);
    spaceId = (await mcp.callOk('service_context')).spaces[0].id;
    for (const item of (await mcp.callOk('list_capabilities')).capabilities) capability[item.key] = item.id;
    for (const row of await org.service.database.rows<{ id: string; key: string }>(sql`SELECT id, key FROM agents WHERE key IS NOT NULL`)) agent[row.key] = row.id;
  });
  afterAll(async () => {
    await mcp?.close();
    await org?.close();
    await receiver?.close();
  });

  const execute = (key: string, input: Record<string, unknown> = {}) =>
    mcp.callOk('execute_capability', { capability_id: capability[key], input, space_id: spaceId, wait_seconds: 20 });

  async function settled(operationId: string): Promise<any> {
    for (let attempt = 0; attempt < 300; attempt += 1) {
      const operation = await mcp.callOk('get_operation', { operation_id: operationId });
      if (!['queued', 'running'].includes(operation.status)) return operation;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`operation ${operationId} did not settle`);
  }

  it('never follows a redirect: 303 and 307 fail connector_failed naming the status, and the internal address is never called', async () => {
    for (const [key, status] of [['see_other', 303], ['temporary', 307]] as const) {
      const operation = await execute(key);
      expect(operation).toMatchObject({ status: 'failed', error: { code: 'connector_failed' } });
      expect(operation.error.message).toBe(`the webhook answered HTTP ${status}, a redirect, which is never followed`);
    }
    const content = await execute('publish', { slug: 'hello' });
    expect(content).toMatchObject({ status: 'failed', error: { code: 'connector_failed', message: 'the content service answered HTTP 307, a redirect, which is never followed' } });
    expect(receiver.internalHits).toEqual([]);
  });

  it('never follows a redirect from an agent: the delivery fails at once, after one attempt', async () => {
    const operation = await mcp.callOk('message_agent', { agent_id: agent.moved, text: 'hello', space_id: spaceId, wait_seconds: 20 });
    expect(operation).toMatchObject({
      status: 'failed',
      error: { code: 'undeliverable', message: 'the agent could not be reached: the agent answered HTTP 307, a redirect, which is never followed' },
    });
    expect(receiver.hitsOf('agent/redirect-307')).toHaveLength(1);
    expect(receiver.internalHits).toEqual([]);
  });

  it('reads at most 1 MiB of an answer: a 16 MiB answer fails the action and nothing of it is stored', async () => {
    const operation = await execute('huge');
    expect(operation).toMatchObject({ status: 'failed', error: { code: 'connector_failed' } });
    expect(operation.error.message).toBe('the webhook sent an answer too large to read (over 1 MiB); nothing of it was kept');
    const read = await mcp.client.callTool({ name: 'get_operation', arguments: { operation_id: operation.operation_id } });
    expect(JSON.stringify(read).length).toBeLessThan(10_000);
    const [row] = await org.service.database.rows<{ size: number }>(sql`SELECT length(coalesce(result::text, '')) + length(coalesce(error::text, '')) AS size FROM operations WHERE id = ${operation.operation_id}`);
    expect(Number(row.size)).toBeLessThan(1000);
  });

  it('an agent answering 16 MiB fails the attempt ("too large"), and nothing of it is stored', async () => {
    const started = await mcp.callOk('message_agent', { agent_id: agent.chatty, text: 'hello', space_id: spaceId });
    const operation = await settled(started.operation_id);
    expect(operation).toMatchObject({ status: 'failed', error: { code: 'undeliverable' } });
    expect(operation.error.message).toContain('too large');
    expect(JSON.stringify(operation).length).toBeLessThan(10_000);
  });

  it('sends the action once to a receiver that stalls its body, and fails it connector_failed', { timeout: 60_000 }, async () => {
    const operation = await execute('stall');
    expect(operation).toMatchObject({ status: 'failed', error: { code: 'connector_failed', message: 'the webhook gave no complete answer within 10 s' } });
    // The queue does not run it again: a while later it was still sent exactly once.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(receiver.hitsOf('/stall')).toHaveLength(1);
  });

  it('honours Retry-After in seconds (429) and as an HTTP date (503), sending again with the same webhook-id', async () => {
    for (const key of ['limited', 'unavailable']) {
      const operation = await execute(key);
      expect(operation).toMatchObject({ status: 'succeeded', result: { status: 200, body: { result: { done: 2 } } } });
      const [first, second] = receiver.hitsOf(`/${key}`);
      expect(second.webhookId).toBe(first.webhookId);
      expect(second.at - first.at).toBeGreaterThanOrEqual(1900);
    }
  });

  it('honours an agent\'s Retry-After instead of the 1-second backoff', async () => {
    const started = await mcp.callOk('message_agent', { agent_id: agent.busy, text: 'hello', space_id: spaceId });
    const operation = await settled(started.operation_id);
    expect(operation).toMatchObject({ status: 'succeeded', result: { done: 2 } });
    const [first, second] = receiver.hitsOf('agent/limited');
    expect(second.webhookId).toBe(first.webhookId);
    expect(second.at - first.at).toBeGreaterThanOrEqual(1900);
  });

  it('a refusal carries the receiver\'s own error text, bounded and without control characters', async () => {
    const operation = await execute('refuse');
    expect(operation).toMatchObject({ status: 'failed', error: { code: 'connector_failed' } });
    expect(operation.error.message).toMatch(/^the webhook answered HTTP 422: bad_amount: the amount must be positive !+…$/);
    expect(operation.error.message.length).toBeLessThan(600);
  });
});
