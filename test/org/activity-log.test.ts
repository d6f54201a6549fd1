/**
 * What the activity log records, area by area (DESIGN 4.6), each entry with who (person, client, agent), what
 * and where (space): memory written, tasks created, asked, answered and cancelled, every delivery attempt
 * (a failed one, its retry, and one failed for good), sign-ins and sign-outs, a password change, consents allowed
 * and denied, a disconnection, and `org apply`. Entries are written in the transaction of their change, so a
 * write that is rolled back leaves none.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordMemory } from '../../src/org/memory/write.js';
import { setPassword } from '../../src/org/people/records.js';
import { parseOrgFile } from '../../src/org/org-file/schema.js';
import { applyOrgFile } from '../../src/org/org-file/apply.js';
import { askTaskQuestion } from '../../src/org/tasks/agent.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { newWebhookSecret, startReceiver, type Answer, type ReceivedDelivery, type Receiver } from '../helpers/agents-at-work.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { registerClient, startAuthorization } from '../helpers/oauth-flow.js';
import { Browserless } from '../helpers/web-client.js';

const AGENT_SECRET = newWebhookSecret();

describe.each(engines)('the activity log, area by area, on %s', (engine) => {
  let org: TestOrg;
  let receiver: Receiver;
  let script: (delivery: ReceivedDelivery, index: number) => Answer = () => ({ status: 202 });
  let mcp: OrgMcp;
  let spaceId: string;
  let ownerId: string;
  let agentId: string;
  let orgFile: string;

  beforeAll(async () => {
    receiver = await startReceiver((delivery, index) => script(delivery, index));
    process.env.ACTIVITY_AGENT_SECRET = AGENT_SECRET;
    orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-activity-')), 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Activity Co }
spaces: [{ key: general, name: General, members: [${OWNER.email}] }]
agents:
  - { key: scripted, name: Scripted, delivery: { kind: webhook, url: "${receiver.url}", secret_env: ACTIVITY_AGENT_SECRET } }
`,
    );
    org = await startOrg(engine, { config: { orgFile, delivery: { windowSeconds: 6, timeoutSeconds: 2 } } });
    mcp = await connectOrgMcp(org, { clientName: 'Activity client' });
    const context = await mcp.callOk('service_context');
    spaceId = context.spaces[0].id;
    ownerId = context.person.id;
    [{ id: agentId }] = await org.service.database.rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'scripted'`);
  });
  afterAll(async () => {
    await mcp?.close();
    await org?.close();
    await receiver?.close();
  });

  async function entries(where: ReturnType<typeof sql>) {
    return org.service.database.rows<Record<string, any>>(
      sql`SELECT kind, summary, person_id, client_id, agent_id, space_id, operation_id, subject, details FROM org_activity WHERE ${where} ORDER BY seq`,
    );
  }

  const countAll = async () => Number((await org.service.database.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM org_activity`))[0].n);

  const signedInBrowser = async () => {
    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    return browser;
  };

  describe('memory', () => {
    it('records a memory write and its new version with the person, the client and the space', async () => {
      const item = await mcp.callOk('record_memory', { kind: 'fact', title: 'Office opens at 9', body: 'Monday to Friday', space_id: spaceId });
      const version = await mcp.callOk('record_memory', { kind: 'fact', title: 'Office opens at 8', body: 'Monday to Friday', space_id: spaceId, supersedes: item.id });
      const written = await entries(sql`kind = 'memory.written'`);
      expect(written).toEqual([
        expect.objectContaining({ subject: item.id, person_id: ownerId, client_id: mcp.connected.clientId, agent_id: null, space_id: spaceId, details: { memory_kind: 'fact', title: 'Office opens at 9' } }),
        expect.objectContaining({ subject: version.id, person_id: ownerId, client_id: mcp.connected.clientId, space_id: spaceId, details: { memory_kind: 'fact', title: 'Office opens at 8', supersedes: item.id } }),
      ]);
      const calls = await entries(sql`kind = 'tool.called' AND subject = ${item.id}`);
      expect(calls).toEqual([expect.objectContaining({ person_id: ownerId, client_id: mcp.connected.clientId, space_id: spaceId, details: expect.objectContaining({ tool: 'record_memory' }) })]);
    });
  });

  describe('rolled back writes', () => {
    it('leaves no entry for a write whose transaction rolls back', async () => {
      const before = await countAll();
      const recorder = { type: 'person' as const, personId: ownerId, clientId: null };
      const input = { kind: 'fact' as const, title: 'Never kept', body: 'rolled back', space_id: spaceId, tags: [] };
      await expect(
        org.service.database.db.transaction(async (tx) => {
          await recordMemory(tx, input, recorder, { spaceIds: [spaceId] }, () => {});
          throw new Error('the change fails after its entry was written');
        }),
      ).rejects.toThrow('the change fails');
      expect(await countAll()).toBe(before);
      expect(await entries(sql`summary LIKE '%Never kept%'`)).toEqual([]);
    });

    it('leaves no entry for a refused tool call', async () => {
      const before = await countAll();
      const error = await mcp.callError('record_memory', { kind: 'fact', title: 'Refused', body: 'b', space_id: spaceId, supersedes: 'mem_missing' });
      expect(error.code).toBe('not_found');
      expect(await countAll()).toBe(before);
    });
  });

  describe('tasks', () => {
    it('records a task created, its agent’s question, the answer and the cancellation, each with its actor', async () => {
      script = () => ({ status: 202 });
      const task = await mcp.callOk('create_task', { space_id: spaceId, title: 'Book the venue', assignee_agent_id: agentId });
      // Delivered, and taken up by its agent (202).
      for (let polls = 0; (await mcp.callOk('get_task', { task_id: task.id })).status !== 'in_progress'; polls += 1) {
        if (polls > 200) throw new Error('the task was not taken up');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const questionId = await askTaskQuestion(org.service.database.db, task.id, { text: 'Which date?', askedBy: agentId, operationId: task.progress[0].operation_id });
      await mcp.callOk('answer_task', { task_id: task.id, question_id: questionId, answer: 'The 3rd' });
      await mcp.callOk('cancel_task', { task_id: task.id, reason: 'Plans changed' });

      const recorded = await entries(sql`subject = ${task.id} AND kind LIKE 'task.%'`);
      const actor = { person_id: ownerId, space_id: spaceId, agent_id: agentId };
      expect(recorded.map((entry) => entry.kind)).toEqual(['task.created', 'task.updated', 'task.question', 'task.answered', 'task.updated']);
      expect(recorded[0]).toMatchObject({ ...actor, client_id: mcp.connected.clientId, details: { title: 'Book the venue' } });
      expect(recorded[1]).toMatchObject({ ...actor, details: { event: 'start', status: 'in_progress' } });
      expect(recorded[2]).toMatchObject({ ...actor, details: { question_id: questionId, question: 'Which date?' } });
      expect(recorded[3]).toMatchObject({ ...actor, client_id: mcp.connected.clientId, details: { question_id: questionId } });
      expect(recorded[4]).toMatchObject({ ...actor, client_id: mcp.connected.clientId, details: { event: 'cancel', reason: 'Plans changed', status: 'cancelled' } });
      // One entry per call, about the task and in its space (answer_task and cancel_task name only the task),
      // though creating it also started the task's operation.
      const called = await entries(sql`kind = 'tool.called' AND details->>'tool' IN ('create_task', 'answer_task', 'cancel_task')`);
      const call = { person_id: ownerId, client_id: mcp.connected.clientId, subject: task.id, space_id: spaceId, operation_id: null };
      expect(called).toEqual(['create_task', 'answer_task', 'cancel_task'].map((tool) => expect.objectContaining({ ...call, details: expect.objectContaining({ tool }) })));
    });
  });

  describe('deliveries', () => {
    it('records each attempt with its number, HTTP status and error: a failed one, its retry, and the delivery', async () => {
      let pings = 0;
      script = (delivery) => (delivery.body.text === 'ping' && pings++ === 0 ? { status: 503 } : { status: 200, body: { result: 'done' } });
      const operation = await mcp.callOk('message_agent', { agent_id: agentId, text: 'ping', space_id: spaceId, wait_seconds: 15 });
      expect(operation).toMatchObject({ status: 'succeeded', result: 'done' });
      const attempts = await entries(sql`kind = 'delivery.attempted' AND operation_id = ${operation.operation_id}`);
      const who = { person_id: ownerId, client_id: mcp.connected.clientId, agent_id: agentId, space_id: spaceId };
      expect(attempts).toEqual([
        expect.objectContaining({ ...who, details: expect.objectContaining({ attempt: 1, outcome: 'will_retry', http_status: 503, error: 'the agent answered HTTP 503', retry_at: expect.any(String) }) }),
        expect.objectContaining({ ...who, details: expect.objectContaining({ attempt: 2, outcome: 'delivered', http_status: 200, error: null }) }),
      ]);
    });

    it('records an attempt that failed for good, and the operation failing undeliverable', async () => {
      script = () => ({ status: 410 });
      const operation = await mcp.callOk('message_agent', { agent_id: agentId, text: 'gone?', space_id: spaceId, wait_seconds: 15 });
      expect(operation.status).toBe('failed');
      const recorded = await entries(sql`operation_id = ${operation.operation_id} AND kind IN ('delivery.attempted', 'operation.failed')`);
      expect(recorded).toEqual([
        expect.objectContaining({ kind: 'delivery.attempted', agent_id: agentId, details: expect.objectContaining({ attempt: 1, outcome: 'failed', http_status: 410, error: 'the agent refused the delivery with HTTP 410' }) }),
        expect.objectContaining({ kind: 'operation.failed', agent_id: agentId, details: expect.objectContaining({ error: expect.objectContaining({ code: 'undeliverable' }) }) }),
      ]);
    });
  });

  describe('people and their clients', () => {
    it('records a sign-in and a sign-out', async () => {
      const before = (await entries(sql`kind IN ('person.signed_in', 'person.signed_out')`)).length;
      const browser = await signedInBrowser();
      const page = await browser.get('/connections');
      expect((await browser.post('/signout', { csrf: browser.hidden(page.text, 'csrf') })).status).toBe(303);
      const recorded = (await entries(sql`kind IN ('person.signed_in', 'person.signed_out')`)).slice(before);
      expect(recorded.map((entry) => [entry.kind, entry.person_id])).toEqual([
        ['person.signed_in', ownerId],
        ['person.signed_out', ownerId],
      ]);
    });

    it('records a password change', async () => {
      const browser = await signedInBrowser();
      const page = await browser.get('/account');
      const next = 'owner-password-456';
      const changed = await browser.post('/account/password', { csrf: browser.hidden(page.text, 'csrf'), current_password: OWNER.password, new_password: next });
      expect(changed.status).toBe(303);
      expect(await entries(sql`kind = 'person.password_changed'`)).toEqual([expect.objectContaining({ person_id: ownerId, client_id: null })]);
      // Back as it was, for the other tests.
      await org.service.database.db.transaction((tx) => setPassword(tx, ownerId, OWNER.password));
    });

    it('records the consent that connected a client, with the scopes granted', async () => {
      const [granted] = await entries(sql`kind = 'consent.granted' AND client_id = ${mcp.connected.clientId}`);
      expect(granted).toMatchObject({ person_id: ownerId, subject: mcp.connected.clientId, details: { scopes: expect.arrayContaining(['memory:write', 'task:write']) } });
      // Named as a person knows it, with the id that tells it from another of the same name.
      expect(granted.summary).toBe(`allowed the client Activity client (client id ${mcp.connected.clientId}): ${granted.details.scopes.join(' ')}`);
    });

    it('records a consent denied, with the client and the scopes it asked for', async () => {
      const clientId = await registerClient(org, 'Denied client');
      const { consentPath } = await startAuthorization(org, clientId, ['memory:read']);
      const browser = await signedInBrowser();
      const consent = await browser.get(consentPath);
      const request = browser.hidden(consent.text, 'request');
      expect((await browser.post('/consent', { request, decision: 'deny', csrf: browser.hidden(consent.text, 'csrf') })).status).toBe(303);
      expect(await entries(sql`kind = 'consent.denied'`)).toEqual([
        expect.objectContaining({ person_id: ownerId, client_id: clientId, summary: `denied the client Denied client (client id ${clientId})`, details: { requested: ['memory:read'] } }),
      ]);
    });

    it('records the disconnection of a client', async () => {
      const other = await connectOrgMcp(org, { scopes: ['memory:read'], clientName: 'Leaving client' });
      await other.close();
      const browser = await signedInBrowser();
      const page = await browser.get('/connections');
      const answer = await browser.post('/connections/disconnect', { csrf: browser.hidden(page.text, 'csrf'), only: other.connected.clientId });
      expect(answer.status).toBe(303);
      expect(await entries(sql`kind = 'client.disconnected'`)).toEqual([
        expect.objectContaining({
          person_id: ownerId,
          client_id: other.connected.clientId,
          summary: `disconnected the client Leaving client (client id ${other.connected.clientId})`,
          details: { grants_revoked: 1 },
        }),
      ]);
    });
  });

  describe('org apply', () => {
    it('records one entry naming what the file created and updated, and none when nothing changed', async () => {
      const text = `organization: { name: Activity Co }
spaces:
  - { key: general, name: General, members: [${OWNER.email}] }
  - { key: sales, name: Sales, members: [${OWNER.email}] }
agents:
  - { key: scripted, name: Scripted Agent, delivery: { kind: webhook, url: "${receiver.url}", secret_env: ACTIVITY_AGENT_SECRET } }
`;
      // The file applied when the organization started is the first entry.
      expect(await entries(sql`kind = 'org.applied'`)).toEqual([
        expect.objectContaining({ details: expect.objectContaining({ created: { spaces: ['general'], agents: ['scripted'] } }) }),
      ]);
      await applyOrgFile(org.service.database.db, parseOrgFile(text, orgFile), process.env, orgFile);
      await applyOrgFile(org.service.database.db, parseOrgFile(text, orgFile), process.env, orgFile);
      const applied = (await entries(sql`kind = 'org.applied'`)).slice(1);
      expect(applied).toEqual([
        expect.objectContaining({
          summary: 'applied org.yaml: created 1 spaces; updated 1 agents',
          details: expect.objectContaining({ source: orgFile, created: { spaces: ['sales'] }, updated: { agents: ['scripted'] } }),
        }),
      ]);
    });
  });
});
