/**
 * Operations as MCP tasks (issue 21 item 2, DESIGN 4.9), through the official TypeScript client speaking 2025-11-25:
 * a task-augmented execute_capability answers its operation as a task at once; the task is input_required while a
 * person decides (its message names the decision and its page), completed with get_operation's result once approved,
 * failed when denied, cancelled on tasks/cancel; tasks/list pages the person's own. A 2025-06-18 client sees today's
 * behaviour.
 */
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, specTypeSchemas, type CallToolResult, type Client, type StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, postgresUrl } from '../helpers/databases.js';
import { BEA, CY, startMailOrg, type MailOrg } from '../helpers/mail-org.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectAt, envelope, MODERN, type RevisionClient } from '../helpers/mcp-revisions.js';
import { postMcp } from '../helpers/oauth-flow.js';
import { openOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';

const taskMethods = (client: Client) => ({
  get: (taskId: string) => client.request({ method: 'tasks/get', params: { taskId } }, specTypeSchemas.GetTaskResult),
  result: (taskId: string) => client.request({ method: 'tasks/result', params: { taskId } }, specTypeSchemas.CallToolResult),
  list: (cursor?: string) => client.request({ method: 'tasks/list', params: cursor ? { cursor } : {} }, specTypeSchemas.ListTasksResult),
  cancel: (taskId: string) => client.request({ method: 'tasks/cancel', params: { taskId } }, specTypeSchemas.CancelTaskResult),
});

/** Polls tasks/get until the task leaves `working`. */
async function awaitTaskStatus(client: Client, taskId: string, attempts = 200) {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const task = await taskMethods(client).get(taskId);
    if (task.status !== 'working') return task;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`task ${taskId} stayed working`);
}

const bearer = (client: OrgMcp) => ({ authorization: `Bearer ${client.connected.accessToken}` });

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

/** One 2026-07-28 request of `client`'s person, with these client capabilities; the JSON-RPC answer. */
async function modernCall(org: TestOrg, client: OrgMcp, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = TASKS) {
  const body = { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { ...envelope(), [CLIENT_CAPABILITIES_META_KEY]: capabilities } } };
  const routed = params.name ?? params.taskId;
  const headers = { 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(typeof routed === 'string' ? { 'mcp-name': routed } : {}) };
  const response = await postMcp(org, body, { ...bearer(client), ...headers });
  // An answer, or a JSON-RPC error (the SDK's modern transport gives some errors an HTTP 4xx status as well).
  expect(response.json?.result ?? response.json?.error, response.text).toBeDefined();
  return { status: response.status, ...response.json } as { status: number; result?: any; error?: { code: number; message: string; data?: any } };
}

async function refusal(promise: Promise<unknown>): Promise<ProtocolError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ProtocolError);
  return error as ProtocolError;
}

describe.each(engines)('operations as MCP tasks (%s)', (engine) => {
  let mail: MailOrg;
  let bea: OrgMcp;
  let owner: OrgMcp;
  let wire: (amount: number) => Promise<CallToolResult & { task?: any }>;
  beforeAll(async () => {
    mail = await startMailOrg(engine);
    // The helpers speak the contract's 2025-06-18; Bea's client speaks 2025-11-25, which has tasks.
    bea = await openOrgMcp(mail.org, (await mail.connect(BEA, 'Bea phone')).connected, '2025-11-25');
    owner = await mail.connect(OWNER, 'Owner desk');
    wire = async (amount) =>
      (await bea.client.callTool({
        name: 'execute_capability',
        arguments: { capability_id: mail.wireMoney, input: { amount }, space_id: mail.general },
        task: { ttl: 60_000 },
      })) as CallToolResult & { task?: any };
  });
  afterAll(async () => {
    await bea?.close();
    await mail?.close();
  });

  it('declares tasks to a 2025-11-25 client, and the three work tools as optionally tasks', async () => {
    expect(bea.client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await bea.client.listTools();
    const taskTools = tools.filter((tool) => (tool as { execution?: { taskSupport?: string } }).execution?.taskSupport === 'optional');
    expect(taskTools.map((tool) => tool.name).sort()).toEqual(['ask', 'execute_capability', 'message_agent']);
  });

  it('answers a paused action as an input_required task naming the decision, and completes it once a person approves', async () => {
    const created = await wire(40);
    const taskId = created.task.taskId;
    expect(created.task).toMatchObject({ taskId: expect.stringMatching(/^op_/), ttl: null, pollInterval: 2000 });
    expect(['working', 'input_required']).toContain(created.task.status);
    // The tool's usual answer rides along, for a host that reads the content.
    expect(JSON.parse((created.content[0] as { text: string }).text).operation_id).toBe(taskId);

    const waiting = await awaitTaskStatus(bea.client, taskId);
    const operation = await bea.callOk('get_operation', { operation_id: taskId });
    expect(operation.status).toBe('paused');
    expect(waiting).toMatchObject({
      taskId,
      status: 'input_required',
      statusMessage: `Waiting for a person's decision ${operation.decision_id}: ${mail.org.url}/inbox/decisions/${operation.decision_id}`,
    });

    await owner.callOk('resolve_decision', { decision_id: operation.decision_id, outcome: 'approve' });
    const result = await taskMethods(bea.client).result(taskId);
    const done = await bea.callOk('get_operation', { operation_id: taskId });
    expect(done.status).toBe('succeeded');
    expect(result.structuredContent).toEqual(done);
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(done);
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    expect(await taskMethods(bea.client).get(taskId)).toMatchObject({ status: 'completed' });
    expect(mail.bank.calls.some((call) => JSON.parse(call.body).input?.amount === 40 || call.body.includes('"amount":40'))).toBe(true);
  });

  it('fails the task when the person denies, with the reason in its message', async () => {
    const { task } = await wire(41);
    const waiting = await awaitTaskStatus(bea.client, task.taskId);
    expect(waiting.status).toBe('input_required');
    const { decision_id } = await bea.callOk('get_operation', { operation_id: task.taskId });
    await owner.callOk('resolve_decision', { decision_id, outcome: 'deny', note: 'not this month' });
    const failed = await taskMethods(bea.client).get(task.taskId);
    expect(failed).toMatchObject({ status: 'failed', statusMessage: 'denied: a person denied the action: not this month' });
    const result = await taskMethods(bea.client).result(task.taskId);
    expect(result.structuredContent).toMatchObject({ operation_id: task.taskId, status: 'failed', error: { code: 'denied' } });
  });

  it('tells a client waiting on tasks/result over an event stream of each status change', async () => {
    const { task } = await wire(45);
    await awaitTaskStatus(bea.client, task.taskId);
    const { decision_id } = await bea.callOk('get_operation', { operation_id: task.taskId });
    const sessionId = (bea.client.transport as StreamableHTTPClientTransport).sessionId!;
    // Only an event stream is acceptable, so the answer streams (raw HTTP: the SDK client asks for JSON first).
    const waiting = fetch(`${mail.org.url}/mcp`, {
      method: 'POST',
      headers: { ...bearer(bea), 'content-type': 'application/json', accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tasks/result', params: { taskId: task.taskId } }),
    }).then((response) => response.text());
    await new Promise((resolve) => setTimeout(resolve, 300));
    await owner.callOk('resolve_decision', { decision_id, outcome: 'approve' });
    const messages = (await waiting)
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)));
    const told = messages.filter((message) => message.method === 'notifications/tasks/status');
    expect(told.at(-1).params).toMatchObject({ taskId: task.taskId, status: 'completed' });
    expect(messages.at(-1)).toMatchObject({ id: 9, result: { structuredContent: { operation_id: task.taskId, status: 'succeeded' } } });
  });

  it('cancels a waiting task, and refuses to cancel it again', async () => {
    const { task } = await wire(42);
    await awaitTaskStatus(bea.client, task.taskId);
    const cancelled = await taskMethods(bea.client).cancel(task.taskId);
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect((await bea.callOk('get_operation', { operation_id: task.taskId })).status).toBe('cancelled');
    const again = await refusal(taskMethods(bea.client).cancel(task.taskId));
    expect(again.code).toBe(-32602);
    expect(again.message).toContain("Cannot cancel task: already in terminal status 'cancelled'");
  });

  it("lists the person's tasks newest first, and keeps them from anyone else", async () => {
    const { tasks, nextCursor } = await taskMethods(bea.client).list();
    expect(nextCursor).toBeUndefined();
    expect(tasks.slice(0, 4).map((task) => task.status)).toEqual(['cancelled', 'completed', 'failed', 'completed']);
    const created = tasks.map((task) => task.createdAt);
    expect([...created].sort().reverse()).toEqual(created);

    const cy = await openOrgMcp(mail.org, (await mail.connect(CY, 'Cy laptop')).connected, '2025-11-25');
    expect((await taskMethods(cy.client).list()).tasks).toEqual([]);
    expect((await refusal(taskMethods(cy.client).get(tasks[0].taskId))).code).toBe(-32602);
    expect((await refusal(taskMethods(cy.client).cancel(tasks[0].taskId))).code).toBe(-32602);
    expect((await refusal(taskMethods(bea.client).get('op_unknown'))).message).toContain('Task not found');
    expect((await refusal(taskMethods(bea.client).list('not-a-cursor'))).code).toBe(-32602);
    await cy.close();
  });

  it('refuses a tool that does not start work as a task, and answers an untasked call as today', async () => {
    const refused = await refusal(bea.client.callTool({ name: 'service_context', arguments: {}, task: {} }));
    expect(refused.code).toBe(-32601);
    const today = await bea.callOk('execute_capability', { capability_id: mail.wireMoney, input: { amount: 43 }, space_id: mail.general, wait_seconds: 5 });
    expect(today.status).toBe('paused');
  });

  it('gives a 2025-06-18 client exactly what it had: no tasks, a task request ignored, no tasks/get', async () => {
    const { client, close } = await connectAt(`${mail.org.url}/mcp`, bearer(bea), '2025-06-18');
    try {
      expect(client.getServerCapabilities()).toEqual({ tools: {} });
      const { tools } = await client.listTools();
      expect(tools.some((tool) => 'execution' in tool)).toBe(false);
      const answer = (await client.callTool({
        name: 'execute_capability',
        arguments: { capability_id: mail.wireMoney, input: { amount: 44 }, space_id: mail.general, wait_seconds: 5 },
        task: { ttl: 1000 },
      })) as CallToolResult;
      expect('task' in answer).toBe(false);
      expect(answer.structuredContent).toMatchObject({ status: 'paused' });
      const unknown = await refusal(taskMethods(client).get((answer.structuredContent as { operation_id: string }).operation_id));
      expect(unknown.code).toBe(-32601);
    } finally {
      await close();
    }
  });
});

describe.runIf(postgresUrl)('operations as MCP tasks across two org processes on one PostgreSQL database', () => {
  let mail: MailOrg;
  let other: TestOrg;
  let bea: OrgMcp;
  let beaThere: RevisionClient;
  beforeAll(async () => {
    mail = await startMailOrg('postgres');
    // The second process shares the database and answers for the same public URL; its calls have a 2-second budget.
    other = await startOrg('postgres', {
      database: { config: mail.org.config.database, drop: async () => {} },
      config: { publicUrl: mail.org.url, authPublicUrl: mail.org.url },
      toolDeadlineMs: 2_000,
    });
    bea = await openOrgMcp(mail.org, (await mail.connect(BEA, 'Bea phone')).connected, '2025-11-25');
    beaThere = await connectAt(`${other.url}/mcp`, bearer(bea), '2025-11-25');
  });
  afterAll(async () => {
    await beaThere?.close();
    await bea?.close();
    await other?.close();
    await mail?.close();
  });

  const startWire = async (amount: number) => {
    const created = (await bea.client.callTool({
      name: 'execute_capability',
      arguments: { capability_id: mail.wireMoney, input: { amount }, space_id: mail.general },
      task: {},
    })) as CallToolResult & { task?: any };
    return created.task.taskId as string;
  };

  it('follows, awaits and completes on one process a task created on the other', async () => {
    const taskId = await startWire(50);
    const waiting = await awaitTaskStatus(beaThere.client, taskId);
    expect(waiting.status).toBe('input_required');
    // tasks/result blocks for the call's budget at most, then says the task still waits.
    const blocked = await refusal(taskMethods(beaThere.client).result(taskId));
    expect(blocked.code).toBe(-32603);
    expect(blocked.message).toBe('the task is still input_required after 2 s: poll tasks/get, and ask tasks/result again once it has ended');

    const owner = await mail.connect(OWNER, 'Owner desk');
    const { decision_id } = await bea.callOk('get_operation', { operation_id: taskId });
    const resolving = taskMethods(beaThere.client).result(taskId);
    await owner.callOk('resolve_decision', { decision_id, outcome: 'approve' });
    expect((await resolving).structuredContent).toMatchObject({ operation_id: taskId, status: 'succeeded' });
    expect((await taskMethods(bea.client).get(taskId)).status).toBe('completed');
  });

  it('serves a 2026-07-28 task created on one process from the other', async () => {
    const call = (org: TestOrg, method: string, params: Record<string, unknown>) => modernCall(org, bea, method, params);
    const { result: created } = await call(mail.org, 'tools/call', {
      name: 'execute_capability',
      arguments: { capability_id: mail.wireMoney, input: { amount: 52 }, space_id: mail.general },
    });
    expect(created.resultType).toBe('task');
    let seen = (await call(other, 'tasks/get', { taskId: created.taskId })).result;
    for (let attempt = 0; seen.status === 'working' && attempt < 200; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      seen = (await call(other, 'tasks/get', { taskId: created.taskId })).result;
    }
    expect(seen.status).toBe('input_required');
    expect((await call(other, 'tasks/cancel', { taskId: created.taskId })).result.resultType).toBe('complete');
    expect((await call(mail.org, 'tasks/get', { taskId: created.taskId })).result.status).toBe('cancelled');
  });

  it('cancels on one process a task created on the other, and both see it cancelled', async () => {
    const taskId = await startWire(51);
    await awaitTaskStatus(bea.client, taskId);
    expect(await taskMethods(beaThere.client).cancel(taskId)).toMatchObject({ taskId, status: 'cancelled' });
    expect((await taskMethods(bea.client).get(taskId)).status).toBe('cancelled');
    const listed = await taskMethods(beaThere.client).list();
    expect(listed.tasks.map((task) => task.taskId).slice(0, 2)).toEqual([taskId, expect.any(String)]);
  });
});

/**
 * 2026-07-28's Tasks extension. The official TypeScript client 2.4.0 has no task support on that revision (a
 * `resultType: "task"` answer is an UnsupportedResultType error to it), so these speak raw HTTP to the real server.
 */
describe.each(engines)('operations as tasks of the 2026-07-28 Tasks extension (%s)', (engine) => {
  let mail: MailOrg;
  let bea: OrgMcp;
  let owner: OrgMcp;
  beforeAll(async () => {
    mail = await startMailOrg(engine);
    bea = await mail.connect(BEA, 'Bea phone');
    owner = await mail.connect(OWNER, 'Owner desk');
  });
  afterAll(async () => {
    await mail?.close();
  });

  const modern = (method: string, params: Record<string, unknown>, capabilities?: Record<string, unknown>) => modernCall(mail.org, bea, method, params, capabilities);

  const wire = (amount: number, capabilities?: Record<string, unknown>) =>
    modern('tools/call', { name: 'execute_capability', arguments: { capability_id: mail.wireMoney, input: { amount }, space_id: mail.general } }, capabilities);

  /** Polls tasks/get until `done` holds for the task (by default: it left `working`). */
  async function pollModern(taskId: string, done = (status: string) => status !== 'working', capabilities?: Record<string, unknown>) {
    for (let attempt = 0; attempt < 200; attempt += 1) {
      const { result } = await modern('tasks/get', { taskId }, capabilities);
      if (done(result.status)) return result;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`task ${taskId} is still ${(await modern('tasks/get', { taskId })).result.status}`);
  }

  it('lists the extension in server/discover, beside MCP Apps', async () => {
    const { result } = await modern('server/discover', {});
    expect(result.capabilities.extensions).toEqual({ 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/ui': {} });
  });

  it('answers a work tool with a task to a client naming the extension, and as today to one that does not', async () => {
    const { result: created } = await wire(60);
    expect(created).toMatchObject({ resultType: 'task', taskId: expect.stringMatching(/^op_/), ttlMs: null, pollIntervalMs: 2000 });
    const { result: today } = await wire(61, {});
    expect(today.resultType).toBe('complete');
    expect(today.structuredContent).toMatchObject({ operation_id: expect.stringMatching(/^op_/), status: 'paused' });
  });

  it('asks a client taking URL elicitation to open the decision page, and completes with the result once approved', async () => {
    const capabilities = { ...TASKS, elicitation: { url: {} } };
    const { result: created } = await wire(62, capabilities);
    const waiting = await pollModern(created.taskId, undefined, capabilities);
    const { decision_id } = await bea.callOk('get_operation', { operation_id: created.taskId });
    const page = `${mail.org.url}/inbox/decisions/${decision_id}`;
    expect(waiting).toMatchObject({ resultType: 'complete', status: 'input_required', statusMessage: `Waiting for a person's decision ${decision_id}: ${page}` });
    expect(waiting.inputRequests).toEqual({
      [`decision:${decision_id}`]: {
        method: 'elicitation/create',
        params: { mode: 'url', elicitationId: decision_id, url: page, message: expect.stringContaining('decision page') },
      },
    });
    // Without URL elicitation the task waits all the same; only the message names the page.
    expect((await modern('tasks/get', { taskId: created.taskId })).result.inputRequests).toEqual({});
    expect((await modern('tasks/update', { taskId: created.taskId, inputResponses: { [`decision:${decision_id}`]: { action: 'accept' } } })).result).toEqual({
      resultType: 'complete',
      _meta: expect.any(Object),
    });

    await owner.callOk('resolve_decision', { decision_id, outcome: 'approve' });
    const done = await pollModern(created.taskId, (status) => ['completed', 'failed', 'cancelled'].includes(status));
    expect(done.status).toBe('completed');
    expect(done.result.structuredContent).toEqual(await bea.callOk('get_operation', { operation_id: created.taskId }));
    expect(done.result.structuredContent.status).toBe('succeeded');
  });

  it('fails a denied task with the reason, and cancels a waiting one', async () => {
    const denied = (await wire(63)).result.taskId;
    await pollModern(denied);
    const { decision_id } = await bea.callOk('get_operation', { operation_id: denied });
    await owner.callOk('resolve_decision', { decision_id, outcome: 'deny' });
    const failed = (await modern('tasks/get', { taskId: denied })).result;
    expect(failed).toMatchObject({ status: 'failed', statusMessage: 'denied: a person denied the action', error: { code: -32603, message: 'denied: a person denied the action' } });
    expect(failed.error.data.operation).toMatchObject({ operation_id: denied, status: 'failed' });

    const waiting = (await wire(64)).result.taskId;
    await pollModern(waiting);
    expect((await modern('tasks/cancel', { taskId: waiting })).result.resultType).toBe('complete');
    expect((await modern('tasks/get', { taskId: waiting })).result.status).toBe('cancelled');
    // Cancelling is cooperative: an ended task is acknowledged and stays as it ended.
    expect((await modern('tasks/cancel', { taskId: denied })).result.resultType).toBe('complete');
    expect((await modern('tasks/get', { taskId: denied })).result.status).toBe('failed');
  });

  it('refuses a client that did not name the extension, an unknown task, and the 2025 methods', async () => {
    const taskId = (await wire(65)).result.taskId;
    const undeclared = await modern('tasks/get', { taskId }, {});
    expect(undeclared.status).toBe(400);
    expect(undeclared.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    });
    expect((await modern('tasks/get', { taskId: 'op_unknown' })).error).toMatchObject({ code: -32602, message: 'Failed to retrieve task: Task not found' });
    expect((await modern('tasks/list', {})).error?.code).toBe(-32601);
    expect((await modern('tasks/result', { taskId })).error?.code).toBe(-32601);
  });
});
