/**
 * One trace joins a tool call, its verdict, its decision and the webhook it sent (DESIGN 4.6): a client calls
 * execute_capability with `_meta.traceparent` on a capability that needs approval, another client approves it,
 * and the webhook connector's receiver gets the same trace id while the activity log holds every step — the
 * call, the verdict with its reasons, the decision opened and resolved (by whom, through which client), the
 * operation's moves and the connector call — each carrying that trace. A decision denied in the inbox or left to
 * expire is recorded too.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectOrgMcp, type OrgMcp, settleOperation as settle } from '../helpers/org-mcp.js';
import { openMcpSession, postMcp } from '../helpers/oauth-flow.js';
import { Browserless } from '../helpers/web-client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const HOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;

function newTrace() {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
}

const traceIdOf = (traceparent: string | null | undefined) => traceparent?.split('-')[1];

describe.each(engines)('the trace of a tool call through the activity log on %s', (engine) => {
  let org: TestOrg;
  let receiver: WebhookReceiver;
  let actor: OrgMcp;
  let governor: OrgMcp;
  let spaceId: string;
  let ownerId: string;
  const capability: Record<string, string> = {};

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    process.env.TRACE_HOOK_SECRET = HOOK_SECRET;
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-trace-')), 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Trace Co, client_autonomy: 2 }
spaces: [{ key: general, name: General, members: [${OWNER.email}] }]
capabilities:
  - key: wire_money
    name: Wire money
    risk: high
    connector: { kind: webhook, url: ${receiver.url}/wire, secret_env: TRACE_HOOK_SECRET }
    input_schema: { type: object, required: [amount], properties: { amount: { type: number } } }
`,
    );
    org = await startOrg(engine, { config: { orgFile } });
    actor = await connectOrgMcp(org, { scopes: ['integrations:read', 'integrations:act', 'memory:write'], clientName: 'Acting client' });
    governor = await connectOrgMcp(org, { scopes: ['governance:admin'], clientName: 'Governing client' });
    const context = await actor.callOk('service_context');
    spaceId = context.spaces[0].id;
    ownerId = context.person.id;
    for (const item of (await actor.callOk('list_capabilities')).capabilities) capability[item.key] = item.id;
  });
  afterAll(async () => {
    await actor?.close();
    await governor?.close();
    await org?.close();
    await receiver?.close();
  });

  async function entriesOf(operationId: string) {
    return org.service.database.rows<Record<string, any>>(
      sql`SELECT kind, person_id, client_id, agent_id, capability_id, space_id, subject, details, traceparent FROM org_activity
          WHERE operation_id = ${operationId} ORDER BY seq`,
    );
  }

  it('joins the call, the verdict, the decision, the operation and the webhook it sent in one trace', async () => {
    const { traceId, traceparent } = newTrace();
    const called = await actor.client.callTool({
      name: 'execute_capability',
      arguments: { capability_id: capability.wire_money, input: { amount: 300 }, space_id: spaceId, wait_seconds: 5 },
      _meta: { traceparent },
    });
    const paused = called.structuredContent as any;
    expect(paused.status).toBe('paused');

    const resolved = await governor.callOk('resolve_decision', { decision_id: paused.decision_id, outcome: 'approve', note: 'fine' });
    expect(resolved.decision.status).toBe('approved');
    expect((await settle(actor, paused.operation_id)).status).toBe('succeeded');

    // The connector's call went out on the same trace, as a hop of its own.
    expect(receiver.calls).toHaveLength(1);
    const sent = receiver.calls[0].headers.traceparent as string;
    expect(traceIdOf(sent)).toBe(traceId);
    expect(sent).not.toBe(traceparent);

    const entries = await entriesOf(paused.operation_id);
    expect(entries.map((entry) => entry.kind)).toEqual([
      'operation.started',
      'tool.called',
      'operation.running',
      'gate.verdict',
      'decision.opened',
      'operation.paused',
      'operation.resumed',
      'decision.resolved',
      'connector.called',
      'operation.succeeded',
    ]);
    for (const entry of entries) expect(traceIdOf(entry.traceparent), entry.kind).toBe(traceId);

    const byKind = (kind: string) => entries.find((entry) => entry.kind === kind)!;
    expect(byKind('tool.called')).toMatchObject({ person_id: ownerId, client_id: actor.connected.clientId, space_id: spaceId, details: { tool: 'execute_capability' } });
    expect(byKind('gate.verdict')).toMatchObject({
      person_id: ownerId,
      client_id: actor.connected.clientId,
      capability_id: capability.wire_money,
      space_id: spaceId,
      details: { verdict: 'require_approval', reasons: [expect.stringContaining('autonomy')] },
    });
    expect(byKind('gate.verdict').agent_id).toEqual(expect.any(String));
    expect(byKind('decision.opened')).toMatchObject({ subject: paused.decision_id, details: { risk: 'high' } });
    expect(byKind('decision.resolved')).toMatchObject({
      subject: paused.decision_id,
      person_id: ownerId,
      client_id: governor.connected.clientId,
      details: { outcome: 'approved', via: 'client', note: 'fine', requested_for: ownerId },
    });
    // The approving call's own entry is about the decision, in the space of the action it decided.
    const approving = await org.service.database.rows<Record<string, any>>(
      sql`SELECT person_id, client_id, space_id, subject FROM org_activity WHERE kind = 'tool.called' AND details->>'tool' = 'resolve_decision'`,
    );
    expect(approving).toEqual([{ person_id: ownerId, client_id: governor.connected.clientId, space_id: spaceId, subject: paused.decision_id }]);
    expect(byKind('connector.called')).toMatchObject({ details: { connector: 'webhook', outcome: 'succeeded', http_status: 200 } });
    expect(byKind('operation.succeeded')).toMatchObject({ person_id: ownerId, client_id: actor.connected.clientId, capability_id: capability.wire_money });
    // Started in the calling process, the run moves the operation from the row its start wrote (handed over, not read).
    const about = { person_id: ownerId, client_id: actor.connected.clientId, capability_id: capability.wire_money, space_id: spaceId, agent_id: byKind('gate.verdict').agent_id };
    expect(byKind('operation.running')).toMatchObject({ ...about, subject: paused.operation_id, details: { operation_kind: 'capability', status: 'running' } });
  });

  it('records a decision denied in the inbox as resolved there, by the person', async () => {
    const paused = await actor.callOk('execute_capability', { capability_id: capability.wire_money, input: { amount: 5 }, space_id: spaceId });
    expect(paused.status).toBe('paused');
    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    const inbox = await browser.get('/inbox');
    const answer = await browser.post('/inbox/resolve', { csrf: browser.hidden(inbox.text, 'csrf'), decision_id: paused.decision_id, outcome: 'deny' });
    expect(answer.status).toBe(303);
    const entries = await entriesOf(paused.operation_id);
    expect(entries.find((entry) => entry.kind === 'decision.resolved')).toMatchObject({
      person_id: ownerId,
      client_id: null,
      details: { outcome: 'denied', via: 'inbox' },
    });
    expect(entries.find((entry) => entry.kind === 'operation.failed')).toMatchObject({ details: { error: { code: 'denied' } } });
    expect(receiver.calls).toHaveLength(1);
  });

  it('records a decision that expired, on the trace of the call that asked', async () => {
    const { traceId, traceparent } = newTrace();
    await org.service.database.db.execute(sql`UPDATE organization SET decision_ttl_seconds = 1`);
    try {
      const called = await actor.client.callTool({
        name: 'execute_capability',
        arguments: { capability_id: capability.wire_money, input: { amount: 7 }, space_id: spaceId },
        _meta: { traceparent },
      });
      const paused = called.structuredContent as any;
      let operation = paused;
      for (let attempt = 0; attempt < 100 && operation.status === 'paused'; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        operation = await actor.callOk('get_operation', { operation_id: paused.operation_id });
      }
      expect(operation).toMatchObject({ status: 'failed', error: { code: 'expired' } });
      const entries = await entriesOf(paused.operation_id);
      expect(entries.slice(-2).map((entry) => [entry.kind, entry.subject, entry.person_id, traceIdOf(entry.traceparent)])).toEqual([
        ['decision.expired', paused.decision_id, ownerId, traceId],
        ['operation.failed', paused.operation_id, ownerId, traceId],
      ]);
    } finally {
      await org.service.database.db.execute(sql`UPDATE organization SET decision_ttl_seconds = 604800`);
    }
  });

  it('takes the trace from the HTTP traceparent header of the MCP request, and ignores a malformed one', async () => {
    const { traceId, traceparent } = newTrace();
    const headers = await openMcpSession(org, actor.connected.accessToken);
    const record = (title: string, extra: Record<string, string>) =>
      postMcp(
        org,
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'record_memory', arguments: { kind: 'fact', title, body: 'b', space_id: spaceId } } },
        { ...headers, ...extra },
      );
    expect((await record('Traced by header', { traceparent })).status).toBe(200);
    expect((await record('Badly traced', { traceparent: '00-not-a-trace-01' })).status).toBe(200);
    const written = await org.service.database.rows<{ summary: string; traceparent: string | null }>(
      sql`SELECT summary, traceparent FROM org_activity WHERE kind = 'memory.written' ORDER BY seq`,
    );
    expect(written.map((entry) => [entry.summary, traceIdOf(entry.traceparent) ?? null])).toEqual([
      ['recorded the fact “Traced by header”', traceId],
      ['recorded the fact “Badly traced”', null],
    ]);
  });
});
