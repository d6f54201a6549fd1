/**
 * Agents at work, end to end (DESIGN 4.3, 4.5): list_agents and message_agent over OAuth tokens and the MCP
 * SDK client; deliveries signed by Standard Webhooks to the example agent (a child process, as a user runs
 * it) and to scripted receivers; answers at once and later through the agent API; retries, `undeliverable`,
 * and the agent API's refusals.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/auth/ids.js';
import { CALLBACK_TOKEN_SECONDS } from '../../src/org/delivery/callback-tokens.js';
import { chargeAgent, usageMonth } from '../../src/org/agents/usage.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { closedPort, newWebhookSecret, startExampleAgent, startReceiver, type Answer, type ExampleAgent, type ReceivedDelivery, type Receiver } from '../helpers/agents-at-work.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { runDueTasks } from '../../src/org/tasks/runs.js';

const ECHO_SECRET = newWebhookSecret();
const SCRIPTED_SECRET = newWebhookSecret();

describe.each(engines)('agents at work on %s', (engine) => {
  let org: TestOrg;
  let agent: ExampleAgent;
  let receiver: Receiver;
  let script: (delivery: ReceivedDelivery, index: number) => Answer = () => ({ status: 202 });
  let mcp: OrgMcp;
  let ids: Record<string, string>;
  let spaceId: string;
  let privateSpaceId: string;

  beforeAll(async () => {
    agent = await startExampleAgent(ECHO_SECRET);
    receiver = await startReceiver((delivery, index) => script(delivery, index));
    process.env.TEST_ECHO_AGENT_SECRET = ECHO_SECRET;
    process.env.TEST_SCRIPTED_AGENT_SECRET = SCRIPTED_SECRET;
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-agents-')), 'org.yaml');
    const secret = 'secret_env: TEST_SCRIPTED_AGENT_SECRET';
    await writeFile(
      orgFile,
      `organization: { name: Agents Co }
spaces:
  - { key: general, name: General, members: [${OWNER.email}] }
  - { key: private, name: Private, members: [] }
agents:
  - { key: echo, name: Echo, autonomy: 2, budget: 100, responsible: ${OWNER.email}, delivery: { kind: webhook, url: "${agent.url}", secret_env: TEST_ECHO_AGENT_SECRET } }
  - { key: scripted, name: Scripted, delivery: { kind: webhook, url: "${receiver.url}", ${secret} } }
  - { key: down, name: Down, delivery: { kind: webhook, url: "http://127.0.0.1:${await closedPort()}/hook", ${secret} } }
  - { key: off, name: Off, delivery: { kind: webhook, url: "${receiver.url}", ${secret} } }
  - { key: quiet, name: Quiet }
  - { key: unsigned, name: Unsigned, delivery: { kind: webhook, url: "${receiver.url}", secret_env: TEST_SECRET_THAT_IS_NOT_SET } }
`,
    );
    org = await startOrg(engine, { config: { orgFile, delivery: { windowSeconds: 4, timeoutSeconds: 2 } } });
    const db = org.service.database.db;
    await db.execute(sql`UPDATE agents SET status = 'disabled' WHERE key = 'off'`);
    const agents = await org.service.database.rows<{ id: string; key: string }>(sql`SELECT id, key FROM agents WHERE key IS NOT NULL`);
    ids = Object.fromEntries(agents.map((row) => [row.key, row.id]));
    const spaces = await org.service.database.rows<{ id: string; key: string }>(sql`SELECT id, key FROM spaces`);
    spaceId = spaces.find((space) => space.key === 'general')!.id;
    privateSpaceId = spaces.find((space) => space.key === 'private')!.id;
    mcp = await connectOrgMcp(org);
  });
  afterAll(async () => {
    await mcp?.close();
    await org?.close();
    await agent?.close();
    await receiver?.close();
  });

  const message = (agentKey: string, text: string, extra: Record<string, unknown> = {}) =>
    mcp.callOk('message_agent', { agent_id: ids[agentKey], text, space_id: spaceId, wait_seconds: 15, ...extra });

  async function fingerprint() {
    return org.service.database.rows(sql`SELECT (SELECT count(*) FROM operations) AS operations, (SELECT count(*) FROM deliveries) AS deliveries`);
  }

  describe('list_agents', () => {
    it('lists the assistant, the declared agents with their status, and the caller’s own client, with this month’s usage', async () => {
      await chargeAgent(org.service.database.db, ids.echo, 3);
      await chargeAgent(org.service.database.db, ids.echo, 4);
      const { agents } = await mcp.callOk('list_agents');
      const byKey = Object.fromEntries(agents.map((entry: any) => [entry.key ?? entry.kind, entry]));
      expect(agents[0]).toMatchObject({ key: 'assistant', kind: 'builtin', messageable: false });
      expect(byKey.echo).toEqual({
        id: ids.echo,
        key: 'echo',
        name: 'Echo',
        description: '',
        kind: 'declared',
        autonomy: 2,
        status: 'active',
        messageable: true,
        usage: { month: usageMonth(), used: 7, budget: 100, remaining: 93 },
      });
      expect(byKey.off).toMatchObject({ status: 'disabled', messageable: false });
      expect(byKey.quiet).toMatchObject({ status: 'active', messageable: false, usage: { used: 0, budget: null, remaining: null } });
      expect(byKey.client).toMatchObject({ kind: 'client', name: 'Test client', messageable: false });
    });

    it('needs service:ask', async () => {
      const narrow = await connectOrgMcp(org, { scopes: ['agents:message'] });
      try {
        await expect(narrow.client.callTool({ name: 'list_agents', arguments: {} })).rejects.toThrow('Insufficient scope: required "service:ask"');
      } finally {
        await narrow.close();
      }
    });
  });

  describe('message_agent to the example agent', () => {
    it('is answered at once: the operation succeeds with what the agent answered', async () => {
      const operation = await message('echo', 'hello there');
      expect(operation).toMatchObject({ kind: 'message', status: 'succeeded', agent_id: ids.echo, space_id: spaceId, result: { reply: 'You said: hello there' } });
      // The agent verified the signature before answering.
      const logged = await agent.waitFor((line) => line.event === 'delivery' && line.operation_id === operation.operation_id);
      expect(logged).toMatchObject({ type: 'message', repeat: false });
    });

    it('is answered later through the agent API, with progress on the way', async () => {
      const operation = await message('echo', 'research our competitors');
      expect(operation.status).toBe('succeeded');
      expect(operation.result).toEqual({ reply: 'Findings on "our competitors": nothing alarming.' });
      expect(operation.progress).toEqual([{ at: expect.any(String), message: 'Looking into it', percent: 50 }]);
    });

    it('returns the running operation with wait_seconds 0, and get_operation follows it to the end', async () => {
      const started = await message('echo', 'research the market', { wait_seconds: 0 });
      expect(['queued', 'running']).toContain(started.status);
      let current = started;
      for (let i = 0; i < 100 && current.status !== 'succeeded'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        current = await mcp.callOk('get_operation', { operation_id: started.operation_id });
      }
      expect(current).toMatchObject({ status: 'succeeded', result: { reply: 'Findings on "the market": nothing alarming.' } });
    });

    it('is idempotent by key: the retry returns the same operation and the agent receives the work once', async () => {
      const first = await message('echo', 'once only', { idempotency_key: 'echo-once' });
      const again = await message('echo', 'once only', { idempotency_key: 'echo-once' });
      expect(again.operation_id).toBe(first.operation_id);
      expect(agent.lines.filter((line) => line.event === 'delivery' && line.operation_id === first.operation_id)).toHaveLength(1);
      expect(await mcp.callError('message_agent', { agent_id: ids.echo, text: 'something else', space_id: spaceId, idempotency_key: 'echo-once' })).toMatchObject({
        code: 'idempotency_conflict',
      });
    });

    it('an answer of any JSON shape is the result as sent: a list, a string, a number', async () => {
      for (const result of [[1, 'two', { three: [3] }], [], 'plain words', 42]) {
        script = () => ({ status: 200, body: { result } });
        const operation = await message('scripted', 'answer with a shape');
        expect(operation).toMatchObject({ status: 'succeeded', result });
        expect(await mcp.callOk('get_operation', { operation_id: operation.operation_id })).toMatchObject({ status: 'succeeded', result });
      }
    });
  });

  describe('the receiving side verifies signatures', () => {
    it('a delivery signed with the right secret verifies; a forged or altered one does not', async () => {
      script = () => ({ status: 200, body: { result: 'ok' } });
      const operation = await message('scripted', 'check my signature');
      expect(operation.status).toBe('succeeded');
      const delivery = receiver.received.find((entry) => entry.body.operation_id === operation.operation_id)!;
      const headers = delivery.headers as Record<string, string>;
      expect(headers['webhook-id']).toMatch(/^msg_/);
      expect(headers['webhook-signature']).toMatch(/^v1,/);
      expect(new Webhook(SCRIPTED_SECRET).verify(delivery.raw, headers)).toEqual(delivery.body);
      expect(() => new Webhook(ECHO_SECRET).verify(delivery.raw, headers)).toThrow();
      expect(() => new Webhook(SCRIPTED_SECRET).verify(delivery.raw.replace('check my', 'forge my'), headers)).toThrow();
      // DESIGN 4.5's body.
      expect(delivery.body).toEqual({
        type: 'message',
        operation_id: operation.operation_id,
        agent: { id: ids.scripted, key: 'scripted' },
        space_id: spaceId,
        text: 'check my signature',
        from: { person_id: expect.stringMatching(/^per_/), client_id: mcp.connected.clientId },
        callback: { url: `${org.config.publicUrl}/agent-api/operations/${operation.operation_id}`, token: expect.stringMatching(/^cbt_/), expires_at: expect.any(String) },
      });
      // The delivery was stored with its first attempt counted, and the token with the expiry the agent was told.
      const [stored] = await org.service.database.rows<{ attempts: number; status: string; expires_at: string }>(
        sql`SELECT d.attempts, d.status, t.expires_at::text FROM deliveries d, callback_tokens t
          WHERE d.id = ${headers['webhook-id']} AND t.hash = ${hashToken(delivery.body.callback.token)} AND t.operation_id = d.operation_id`,
      );
      expect(stored).toMatchObject({ status: 'delivered' });
      expect(Number(stored.attempts)).toBe(1);
      expect(Date.parse(stored.expires_at)).toBe(Date.parse(delivery.body.callback.expires_at));
      expect(Math.abs(Date.parse(stored.expires_at) - Date.now() - CALLBACK_TOKEN_SECONDS * 1000)).toBeLessThan(60_000);
    });

    it('the example agent refuses a delivery with a bad signature (401) and does no work', async () => {
      const body = JSON.stringify({ type: 'message', operation_id: 'op_forged', text: 'hi' });
      const headers = { 'content-type': 'application/json', 'webhook-id': 'msg_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
      const forged = await fetch(agent.url, { method: 'POST', headers: { ...headers, 'webhook-signature': new Webhook(SCRIPTED_SECRET).sign('msg_forged', new Date(), body) }, body });
      expect(forged.status).toBe(401);
      const unsigned = await fetch(agent.url, { method: 'POST', headers, body });
      expect(unsigned.status).toBe(401);
      expect(agent.lines.some((line) => line.event === 'delivery' && line.operation_id === 'op_forged')).toBe(false);
    });
  });

  describe('retries', () => {
    it('retries 5xx and 429 with the same webhook-id, then takes the answer', async () => {
      const before = receiver.received.length;
      script = ((offset) => (_delivery: ReceivedDelivery, index: number) => {
        const attempt = index - offset;
        return attempt === 0 ? { status: 503 } : attempt === 1 ? { status: 429 } : { status: 200, body: { result: { third: 'time' } } };
      })(before);
      const operation = await message('scripted', 'flaky');
      expect(operation).toMatchObject({ status: 'succeeded', result: { third: 'time' } });
      const attempts = receiver.received.filter((entry) => entry.body.operation_id === operation.operation_id);
      expect(attempts).toHaveLength(3);
      expect(new Set(attempts.map((entry) => entry.headers['webhook-id'])).size).toBe(1);
      // Each attempt is signed anew and carries its own callback token.
      expect(new Set(attempts.map((entry) => entry.body.callback.token)).size).toBe(3);
    });

    it('fails undeliverable once the retry window passes without reaching the agent', async () => {
      const operation = await message('down', 'anyone there?');
      expect(operation.status).toBe('failed');
      expect(operation.error).toEqual({ code: 'undeliverable', message: expect.stringMatching(/^the agent could not be reached: .*gave up after \d+ attempts$/) });
      const [row] = await org.service.database.rows<{ attempts: number; status: string }>(
        sql`SELECT attempts, status FROM deliveries WHERE operation_id = ${operation.operation_id}`,
      );
      expect(row.status).toBe('failed');
      expect(Number(row.attempts)).toBeGreaterThanOrEqual(2);
    });

    it('fails undeliverable at once on a 4xx other than 408 and 429', async () => {
      const before = receiver.received.length;
      script = () => ({ status: 410 });
      const operation = await message('scripted', 'gone?');
      expect(operation).toMatchObject({ status: 'failed', error: { code: 'undeliverable', message: 'the agent could not be reached: the agent refused the delivery with HTTP 410' } });
      expect(receiver.received.length - before).toBe(1);
    });
  });

  describe('message_agent refusals write nothing', () => {
    it.each([
      ['a disabled agent', 'off', 'agent_disabled'],
      ['the built-in assistant', 'assistant', 'agent_unreachable'],
      ['an agent without delivery', 'quiet', 'agent_unreachable'],
      ['an agent whose signing secret is not set', 'unsigned', 'agent_unreachable'],
    ])('%s → %s', async (_name, key, code) => {
      const before = await fingerprint();
      const error = await mcp.callError('message_agent', { agent_id: ids[key], text: 'hi', space_id: spaceId });
      expect(error.code).toBe(code);
      if (key === 'assistant') expect(error.details).toEqual({ use_tool: 'ask' });
      expect(await fingerprint()).toEqual(before);
    });

    it('an unknown agent, or a space the person is not in → not_found', async () => {
      const before = await fingerprint();
      expect(await mcp.callError('message_agent', { agent_id: 'agt_nope', text: 'hi', space_id: spaceId })).toMatchObject({ code: 'not_found', message: 'agent not found' });
      expect(await mcp.callError('message_agent', { agent_id: ids.echo, text: 'hi', space_id: privateSpaceId })).toMatchObject({ code: 'not_found' });
      expect(await fingerprint()).toEqual(before);
    });
  });

  describe('tasks assigned to an agent', () => {
    /** Polls get_task until `done` says so. */
    async function taskUntil(taskId: string, done: (task: any) => boolean): Promise<any> {
      let task = await mcp.callOk('get_task', { task_id: taskId });
      for (let i = 0; i < 150 && !done(task); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        task = await mcp.callOk('get_task', { task_id: taskId });
      }
      return task;
    }

    it('is delivered on create; the agent asks a question, gets the answer as type answer, and completes the task', async () => {
      const created = await mcp.callOk('create_task', { space_id: spaceId, title: 'Write the launch post', assignee_agent_id: ids.echo });
      const waiting = await taskUntil(created.id, (task) => task.status === 'waiting');
      expect(waiting.status).toBe('waiting');
      expect(waiting.questions).toEqual([
        expect.objectContaining({ text: 'Before I start on "Write the launch post": is there a deadline?', asked_by: { type: 'agent', id: ids.echo } }),
      ]);
      const operationId = waiting.progress.find((event: any) => event.operation_id)!.operation_id;
      const delivered = await agent.waitFor((line) => line.event === 'delivery' && line.operation_id === operationId && line.type === 'task');
      expect(delivered.repeat).toBe(false);
      expect(await mcp.callOk('get_operation', { operation_id: operationId })).toMatchObject({ kind: 'task', status: 'running', agent_id: ids.echo });

      await mcp.callOk('answer_task', { task_id: created.id, question_id: waiting.questions[0].id, answer: 'Friday noon' });
      const done = await taskUntil(created.id, (task) => task.status === 'done');
      expect(done).toMatchObject({ status: 'done', result: { done: true, told: 'Friday noon' } });
      expect(done.progress.map((event: any) => event.message)).toContain('Started on the task');
      await agent.waitFor((line) => line.event === 'delivery' && line.operation_id === operationId && line.type === 'answer');
      expect(await mcp.callOk('get_operation', { operation_id: operationId })).toMatchObject({ status: 'succeeded', result: { done: true, told: 'Friday noon' } });
    });

    it('an answer to the question arrives with the task and the question in the body', async () => {
      script = () => ({ status: 202 });
      const created = await mcp.callOk('create_task', { space_id: spaceId, title: 'Check the answer body', assignee_agent_id: ids.scripted });
      const [sent] = (await receiver.waitForCount(receiver.received.length)).filter((entry) => entry.body.task?.id === created.id);
      const delivery = sent ?? (await waitForBody((body) => body.task?.id === created.id));
      expect(delivery.body).toMatchObject({ type: 'task', agent: { id: ids.scripted, key: 'scripted' }, space_id: spaceId, task: { id: created.id, title: 'Check the answer body' }, run_at: null });
      const { callback } = delivery.body;
      const asked = await fetch(`${callback.url}/questions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${callback.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Which tone?' }),
      });
      expect(asked.status).toBe(200);
      const { question_id } = await asked.json();
      expect(question_id).toMatch(/^q_/);
      expect((await mcp.callOk('get_task', { task_id: created.id })).status).toBe('waiting');
      await mcp.callOk('answer_task', { task_id: created.id, question_id, answer: 'Warm' });
      const answer = await waitForBody((body) => body.type === 'answer' && body.operation_id === delivery.body.operation_id);
      expect(answer.body).toMatchObject({
        text: 'Warm',
        answer: { question_id, question: 'Which tone?', text: 'Warm' },
        task: { id: created.id, status: 'in_progress' },
        callback: { url: callback.url },
      });
      expect(answer.headers['webhook-id']).not.toBe(delivery.headers['webhook-id']);

      // A task delivery's /fail puts the task back to open with the error as a progress event.
      const failed = await fetch(`${callback.url}/fail`, {
        method: 'POST',
        headers: { authorization: `Bearer ${answer.body.callback.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ error: 'the tone was not found' }),
      });
      expect(failed.status).toBe(200);
      const reopened = await mcp.callOk('get_task', { task_id: created.id });
      expect(reopened.status).toBe('open');
      expect(reopened.progress.at(-1).message).toMatch(/the tone was not found/);
    });

    it('each scheduled run is delivered the same way, carrying the time it runs for', async () => {
      script = () => ({ status: 200, body: { result: { ran: true } } });
      const created = await mcp.callOk('create_task', {
        space_id: spaceId,
        title: 'Scheduled check',
        assignee_agent_id: ids.scripted,
        schedule: { at: '2031-07-01T09:30', timezone: 'Europe/Berlin' },
      });
      expect(receiver.received.some((entry) => entry.body.task?.id === created.id)).toBe(false);
      await runDueTasks(org.service.ctx, new Date('2031-07-01T07:30:00Z'));
      const run = await waitForBody((body) => body.task?.id === created.id);
      expect(run.body).toMatchObject({ type: 'task', run_at: '2031-07-01T07:30:00.000Z', from: { client_id: null } });
      const done = await taskUntil(created.id, (task) => task.status === 'done');
      expect(done).toMatchObject({ status: 'done', result: { ran: true } });
    });

    async function waitForBody(match: (body: any) => boolean): Promise<ReceivedDelivery> {
      for (;;) {
        const found = receiver.received.find((entry) => match(entry.body));
        if (found) return found;
        await receiver.waitForCount(receiver.received.length + 1);
      }
    }
  });

  describe('the agent API', () => {
    /** A message the scripted receiver accepts (202): its operation runs, and the test holds its callback. */
    async function acceptedWork(): Promise<{ operationId: string; url: string; token: string }> {
      script = () => ({ status: 202 });
      const operation = await message('scripted', 'take your time', { wait_seconds: 0 });
      const [delivery] = (await receiver.waitForCount(receiver.received.length)).filter((entry) => entry.body.operation_id === operation.operation_id);
      const found = delivery ?? (await waitForDelivery(operation.operation_id));
      return { operationId: operation.operation_id, url: found.body.callback.url, token: found.body.callback.token };
    }

    async function waitForDelivery(operationId: string): Promise<ReceivedDelivery> {
      for (;;) {
        const found = receiver.received.find((entry) => entry.body.operation_id === operationId);
        if (found) return found;
        await receiver.waitForCount(receiver.received.length + 1);
      }
    }

    async function report(url: string, token: string | undefined, body: unknown, method = 'POST') {
      const response = await fetch(url, {
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: response.status, headers: response.headers, body: await response.json() };
    }

    function expectUnauthorized(answer: { status: number; headers: Headers; body: any }) {
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
      expect(answer.body).toEqual({ error: { code: 'unauthorized', message: 'the callback token is missing, wrong or expired for this operation' } });
    }

    it('takes progress, then completes the operation; a finished operation refuses further reports', async () => {
      const work = await acceptedWork();
      const progressed = await report(`${work.url}/progress`, work.token, { message: 'halfway', percent: 50 });
      expect(progressed.status).toBe(200);
      expect(progressed.body.operation).toMatchObject({ status: 'running', progress: [{ message: 'halfway', percent: 50 }] });
      const completed = await report(`${work.url}/complete`, work.token, { result: { answer: 42 } });
      expect(completed.status).toBe(200);
      expect(completed.body.operation).toMatchObject({ status: 'succeeded', result: { answer: 42 } });
      expect(await mcp.callOk('get_operation', { operation_id: work.operationId })).toMatchObject({ status: 'succeeded', result: { answer: 42 } });

      for (const [route, body] of [['complete', { result: 1 }], ['fail', { error: 'late' }], ['progress', { message: 'late' }]] as const) {
        const refused = await report(`${work.url}/${route}`, work.token, body);
        expect(refused.status).toBe(409);
        expect(refused.body.error.code).toBe('invalid_state');
        expect(refused.body.error.message).toMatch(/succeeded/);
      }
    });

    it('fail ends the operation with agent_failed', async () => {
      const work = await acceptedWork();
      const failed = await report(`${work.url}/fail`, work.token, { error: 'the printer is on fire' });
      expect(failed.status).toBe(200);
      expect(await mcp.callOk('get_operation', { operation_id: work.operationId })).toMatchObject({
        status: 'failed',
        error: { code: 'agent_failed', message: 'the printer is on fire' },
      });
    });

    it('refuses a missing, wrong or foreign token with 401 and a Bearer challenge', async () => {
      const work = await acceptedWork();
      const other = await acceptedWork();
      expectUnauthorized(await report(`${work.url}/progress`, undefined, { message: 'x' }));
      expectUnauthorized(await report(`${work.url}/progress`, 'cbt_wrong', { message: 'x' }));
      // A token is bound to its own operation.
      expectUnauthorized(await report(`${work.url}/progress`, other.token, { message: 'x' }));
      // Authentication comes before the body is looked at.
      expectUnauthorized(await report(`${work.url}/progress`, 'cbt_wrong', '{not json'));
    });

    it('refuses an expired token, and any token once the grace after the end has passed', async () => {
      const work = await acceptedWork();
      await org.service.database.db.execute(sql`UPDATE callback_tokens SET expires_at = now() - interval '1 second' WHERE operation_id = ${work.operationId}`);
      expectUnauthorized(await report(`${work.url}/progress`, work.token, { message: 'x' }));

      const ended = await acceptedWork();
      expect((await report(`${ended.url}/complete`, ended.token, { result: null })).status).toBe(200);
      await org.service.database.db.execute(sql`UPDATE operations SET finished_at = now() - interval '11 minutes' WHERE id = ${ended.operationId}`);
      expectUnauthorized(await report(`${ended.url}/complete`, ended.token, { result: null }));
    });

    it.each([
      ['progress', '{not json'],
      ['progress', { percent: 20 }],
      ['progress', { message: 'x', percent: 101 }],
      ['progress', { message: 'x', extra: true }],
      ['complete', {}],
      ['fail', { error: '' }],
      ['questions', { text: 5 }],
    ])('refuses a bad %s body %j with 400 invalid_request and changes nothing', async (route, body) => {
      const work = await acceptedWork();
      const refused = await report(`${work.url}/${route}`, work.token, body);
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
      expect(await mcp.callOk('get_operation', { operation_id: work.operationId })).toMatchObject({ status: 'running', progress: [] });
    });

    it('records memory in the operation’s space with this agent and operation as provenance, and searches it', async () => {
      const work = await acceptedWork();
      const recorded = await report(`${work.url}/memory`, work.token, { kind: 'fact', title: 'Pricing page', body: 'The pricing page moved to /plans', tags: ['web'] });
      expect(recorded.status).toBe(201);
      expect(recorded.body).toMatchObject({
        kind: 'fact',
        title: 'Pricing page',
        space_id: spaceId,
        status: 'current',
        provenance: {
          recorded_by: { type: 'agent', id: ids.scripted, name: 'Scripted' },
          on_behalf_of: { person_id: expect.stringMatching(/^per_/) },
          operation_id: work.operationId,
        },
      });
      const search = await fetch(`${work.url}/memory?query=pricing`, { headers: { authorization: `Bearer ${work.token}` } });
      expect(search.status).toBe(200);
      expect((await search.json()).items.map((item: any) => item.id)).toContain(recorded.body.id);
      // The person finds what the agent recorded, with its provenance.
      const found = await mcp.callOk('search_memory', { query: 'pricing', space_id: spaceId });
      expect(found.items.find((item: any) => item.id === recorded.body.id)?.provenance.operation_id).toBe(work.operationId);
      const bad = await report(`${work.url}/memory`, work.token, { kind: 'rumour', title: 'x', body: 'y' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_request');
      expectUnauthorized(await report(`${work.url}/memory`, 'cbt_wrong', { kind: 'fact', title: 'x', body: 'y' }));
    });

    it('questions belong to task deliveries; an unknown capability is not_found', async () => {
      const work = await acceptedWork();
      const question = await report(`${work.url}/questions`, work.token, { text: 'deadline?' });
      expect(question.status).toBe(400);
      expect(question.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/task deliveries only/) });
      const execute = await report(`${work.url}/capabilities/cap_x/execute`, work.token, { input: {}, idempotency_key: 'k1' });
      expect(execute.status).toBe(404);
      expect(execute.body.error.code).toBe('not_found');
      expectUnauthorized(await report(`${work.url}/capabilities/cap_x/execute`, 'cbt_wrong', { input: {}, idempotency_key: 'k1' }));
    });
  });
});
