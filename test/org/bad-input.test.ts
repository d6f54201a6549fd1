/**
 * Bad input is `invalid_request`, never `internal_error` (issue 16 item 8), on every org tool and the agent
 * API: a NUL character in any string or JSON value, JSON nested deeper than 64 levels, dates PostgreSQL cannot
 * store, and tampered cursors. The NUL sweep walks every tool `tools/list` names and every string or JSON
 * argument of its input schema, so a new tool is covered once it has a baseline here.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { newWebhookSecret, startReceiver, type Receiver } from '../helpers/agents-at-work.js';
import { openMcpSession, postMcp } from '../helpers/oauth-flow.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const AGENT_SECRET = newWebhookSecret();
const HOOK_SECRET = newWebhookSecret();
const NUL = 'a\u0000b';
const LATER = '2030-01-01T00:00:00Z';

/** `depth` levels of nesting as JSON text, `{"a":{"a":…1…}}` (JSON.stringify itself overflows past a few thousand). */
function nestedJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** `depth` levels of nesting: `{"a":{"a":…1…}}`. */
function nested(depth: number): Record<string, unknown> {
  return JSON.parse(nestedJson(depth));
}

/** A JSON Schema as tools/list gives it (the parts the sweep reads). */
interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: unknown;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

/** Every argument path of a schema that takes a string or a JSON value, with the bad values to put there. */
function badValuesOf(schema: JsonSchema, at: string[] = []): Array<{ path: string[]; value: unknown }> {
  const found: Array<{ path: string[]; value: unknown }> = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const here = [...at, name];
    const types = [property, ...(property.anyOf ?? [])];
    for (const type of types) {
      if (type.type === 'string' && !type.enum) found.push({ path: here, value: NUL });
      if (type.type === 'array' && type.items?.type === 'string' && !type.items.enum) found.push({ path: here, value: [NUL] });
      if (type.type === 'object' && type.properties) found.push(...badValuesOf(type, here));
      if ((type.type === 'object' && !type.properties) || (type.type === undefined && !type.anyOf && !type.enum)) {
        found.push({ path: here, value: { k: NUL } }, { path: here, value: { [NUL]: 1 } }, { path: here, value: { k: [{ k: NUL }] } });
      }
    }
  }
  return found;
}

function withValue(base: Record<string, unknown>, at: string[], value: unknown): Record<string, unknown> {
  const copy = structuredClone(base);
  let target: Record<string, unknown> = copy;
  for (const name of at.slice(0, -1)) target = (target[name] ??= {}) as Record<string, unknown>;
  target[at[at.length - 1]] = value;
  return copy;
}

describe.each(engines)('bad input on %s', (engine) => {
  let org: TestOrg;
  let agent: Receiver;
  let world: WebhookReceiver;
  let mcp: OrgMcp;
  let governor: OrgMcp;
  let spaceId: string;
  let workerId: string;
  let capabilities: Record<string, string>;
  let task: { id: string; questionId: string };
  let callback: { url: string; token: string };
  let decisionId: string;

  beforeAll(async () => {
    agent = await startReceiver(() => ({ status: 202 }));
    world = await startWebhookReceiver();
    process.env.TEST_BAD_INPUT_AGENT_SECRET = AGENT_SECRET;
    process.env.TEST_BAD_INPUT_HOOK_SECRET = HOOK_SECRET;
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-bad-input-')), 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Input Co }
spaces:
  - { key: general, name: General, members: [${OWNER.email}] }
agents:
  - { key: worker, name: Worker, autonomy: 3, budget: 1000, responsible: ${OWNER.email}, delivery: { kind: webhook, url: "${agent.url}", secret_env: TEST_BAD_INPUT_AGENT_SECRET } }
capabilities:
  - key: notify
    name: Notify the team
    risk: low
    connector: { kind: webhook, url: ${world.url}/notify, secret_env: TEST_BAD_INPUT_HOOK_SECRET }
  - key: deploy
    name: Deploy
    risk: high
    connector: { kind: webhook, url: ${world.url}/deploy, secret_env: TEST_BAD_INPUT_HOOK_SECRET }
`,
    );
    org = await startOrg(engine, { config: { orgFile } });
    const rows = await org.service.database.rows<{ id: string; key: string }>(sql`SELECT id, key FROM capabilities`);
    capabilities = Object.fromEntries(rows.map((row) => [row.key, row.id]));
    mcp = await connectOrgMcp(org);
    governor = await connectOrgMcp(org);
    spaceId = (await mcp.callOk('service_context')).spaces[0].id;
    workerId = (await mcp.callOk('list_agents')).agents.find((entry: { key: string }) => entry.key === 'worker').id;

    // A task delivered to the worker, with a question open: its callback serves the agent API sweep.
    const created = await mcp.callOk('create_task', { space_id: spaceId, title: 'Tidy up', assignee_agent_id: workerId });
    const [delivery] = await agent.waitForCount(1);
    callback = delivery.body.callback;
    const asked = await agentApi('POST', '/questions', { text: 'Which shelf?' });
    expect(asked.status).toBe(200);
    task = { id: created.id, questionId: asked.body.question_id };

    // A decision pending for another client of the same person to resolve.
    let paused = await mcp.callOk('execute_capability', { capability_id: capabilities.deploy, input: {}, space_id: spaceId, wait_seconds: 10 });
    for (let tries = 0; paused.status !== 'paused' && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      paused = await mcp.callOk('get_operation', { operation_id: paused.operation_id });
    }
    expect(paused.status).toBe('paused');
    decisionId = (await governor.callOk('list_decisions')).decisions[0].id;
  });
  afterAll(async () => {
    await mcp?.close();
    await governor?.close();
    await org?.close();
    await agent?.close();
    await world?.close();
  });

  async function agentApi(method: string, suffix: string, body?: unknown, url = callback.url) {
    const response = await fetch(`${url}${suffix}`, {
      method,
      headers: { authorization: `Bearer ${callback.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  async function operationCount(): Promise<number> {
    const [{ count }] = await org.service.database.rows<{ count: number }>(sql`SELECT count(*)::int AS count FROM operations`);
    return count;
  }

  /** Arguments each tool accepts (ids may name nothing): the sweep changes one argument at a time. */
  function baselines(): Record<string, Record<string, unknown>> {
    return {
      service_context: {},
      get_operation: { operation_id: 'op_none' },
      list_agents: {},
      message_agent: { agent_id: workerId, text: 'hello', space_id: spaceId },
      record_memory: { kind: 'fact', title: 'T', body: 'B', space_id: spaceId, tags: ['t'], supersedes: 'mem_none', valid_from: LATER, valid_until: LATER },
      search_memory: { query: 'q', space_id: spaceId, tags: ['t'], as_of: LATER },
      get_memory: { memory_id: 'mem_none' },
      create_task: { space_id: spaceId, title: 'T', description: 'D', assignee_agent_id: workerId, schedule: { cron: '0 9 * * 1', timezone: 'Europe/Berlin' } },
      list_tasks: { space_id: spaceId, assignee_agent_id: workerId, cursor: LATER },
      get_task: { task_id: task.id },
      answer_task: { task_id: task.id, question_id: task.questionId, answer: 'A' },
      cancel_task: { task_id: 'task_none', reason: 'R' },
      ask: { question: 'Q?', space_id: spaceId },
      list_capabilities: { query: 'q' },
      describe_capability: { capability_id: capabilities.notify },
      execute_capability: { capability_id: capabilities.notify, input: { text: 'x' }, space_id: spaceId, dry_run: true },
      list_decisions: {},
      resolve_decision: { decision_id: decisionId, outcome: 'deny', note: 'N', remember: { until: LATER, same_input: true } },
    };
  }

  describe('a NUL character', () => {
    it('in any string or JSON argument of every org tool is invalid_request', async () => {
      const { tools } = await mcp.client.listTools();
      const bases = baselines();
      const swept: string[] = [];
      const refused: string[] = [];
      for (const tool of tools) {
        const base = bases[tool.name];
        expect(base, `give ${tool.name} a baseline in this test`).toBeDefined();
        const properties = (tool.inputSchema as JsonSchema).properties ?? {};
        const full = { ...base, ...('idempotency_key' in properties ? { idempotency_key: 'nul-sweep' } : {}), ...('wait_seconds' in properties ? { wait_seconds: 0 } : {}) };
        for (const { path: at, value } of badValuesOf(tool.inputSchema as JsonSchema)) {
          const error = await mcp.callError(tool.name, withValue(full, at, value));
          const argument = `${tool.name}.${at.join('.')}`;
          if (error.code !== 'invalid_request') refused.push(`${argument} (${JSON.stringify(value)}): ${error.code}`);
          swept.push(argument);
        }
      }
      expect(refused).toEqual([]);
      // The sweep reached the arguments that answered 500 before.
      expect(swept).toEqual(expect.arrayContaining(['message_agent.text', 'execute_capability.input', 'record_memory.title', 'create_task.title', 'ask.question']));
    });

    it('in any string or JSON value sent to the agent API is invalid_request', async () => {
      const memory = { kind: 'fact', title: 'T', body: 'B', tags: ['t'], supersedes: 'mem_none', valid_from: LATER, valid_until: LATER };
      const cases: Array<[string, string, unknown]> = [
        ['POST', '/progress', { message: NUL }],
        ['POST', '/complete', { result: NUL }],
        ['POST', '/complete', { result: { k: NUL } }],
        ['POST', '/complete', { result: { [NUL]: 1 } }],
        ['POST', '/fail', { error: NUL }],
        ['POST', '/fail', { error: { message: NUL } }],
        ['POST', '/fail', { error: { message: 'm', code: NUL } }],
        ['POST', '/questions', { text: NUL }],
        ['GET', `/memory?query=${encodeURIComponent(NUL)}`, undefined],
        ['GET', `/memory?query=q&cursor=${encodeURIComponent(NUL)}`, undefined],
        ...['title', 'body', 'supersedes', 'valid_from', 'valid_until'].map((field): [string, string, unknown] => ['POST', '/memory', { ...memory, [field]: NUL }]),
        ['POST', '/memory', { ...memory, tags: [NUL] }],
        ['POST', `/capabilities/${capabilities.notify}/execute`, { input: { text: NUL }, idempotency_key: 'k1' }],
        ['POST', `/capabilities/${capabilities.notify}/execute`, { input: { [NUL]: 'x' }, idempotency_key: 'k2' }],
        ['POST', `/capabilities/${capabilities.notify}/execute`, { input: {}, idempotency_key: NUL }],
        ['POST', `/capabilities/${encodeURIComponent(NUL)}/execute`, { input: {}, idempotency_key: 'k3' }],
      ];
      const refused: string[] = [];
      for (const [method, suffix, body] of cases) {
        const answer = await agentApi(method, suffix, body);
        if (answer.status !== 400 || answer.body?.error?.code !== 'invalid_request') refused.push(`${method} ${suffix} ${JSON.stringify(body)}: ${answer.status}`);
      }
      expect(refused).toEqual([]);
      // An operation id that cannot exist has no valid token: 401, as any unknown operation.
      const unknown = await agentApi('POST', '/progress', { message: 'm' }, callback.url.replace(/[^/]+$/, encodeURIComponent(NUL)));
      expect(unknown.status).toBe(401);
      // Nothing of it reached the task: it still runs, with its one question.
      const current = await mcp.callOk('get_task', { task_id: task.id });
      expect(current.status).toBe('waiting');
      expect(current.progress.map((event: { message: string }) => event.message)).not.toContain(NUL);
    });
  });

  describe('JSON nested deeper than 64 levels', () => {
    it('is accepted up to 64 levels', async () => {
      const answer = await mcp.callOk('execute_capability', { capability_id: capabilities.notify, input: nested(63), space_id: spaceId, dry_run: true });
      expect(answer).toMatchObject({ dry_run: true });
    });

    it.each([65, 3_000, 20_000])('%i levels of execute_capability input are invalid_request and start nothing', async (depth) => {
      const before = await operationCount();
      const headers = await openMcpSession(org, mcp.connected.accessToken);
      const args = `{"capability_id":"${capabilities.notify}","space_id":"${spaceId}","idempotency_key":"deep-${depth}","input":${nestedJson(depth)}}`;
      const called = await postMcp(org, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_capability","arguments":${args}}}`, headers);
      expect(called.status).toBe(200);
      expect(called.json.result.isError).toBe(true);
      const { error } = JSON.parse(called.json.result.content[0].text);
      expect(error.code).toBe('invalid_request');
      expect(error.message).toContain('64 levels');
      expect(await operationCount()).toBe(before);
      expect(world.calls.filter((call) => call.path === '/notify')).toHaveLength(0);
    });

    it.each([65, 3_000, 20_000])('%i levels sent to the agent API are invalid_request and change nothing', async (depth) => {
      const before = await operationCount();
      const executed = await agentApi('POST', `/capabilities/${capabilities.notify}/execute`, `{"idempotency_key":"deep-${depth}","input":${nestedJson(depth)}}`);
      expect(executed.status).toBe(400);
      expect(executed.body.error.code).toBe('invalid_request');
      const completed = await agentApi('POST', '/complete', `{"result":${nestedJson(depth)}}`);
      expect(completed.status).toBe(400);
      expect(completed.body.error.code).toBe('invalid_request');
      expect(await operationCount()).toBe(before);
      expect((await mcp.callOk('get_task', { task_id: task.id })).status).toBe('waiting');
    });
    it('20000 levels anywhere else in a request (an unknown argument, _meta, an unknown member) are refused without an internal error', async () => {
      const before = await operationCount();
      const headers = await openMcpSession(org, mcp.connected.accessToken);
      const deep = nestedJson(20_000);
      const unknownArgument = await postMcp(org, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_agents","arguments":{"extra":${deep}}}}`, headers);
      expect(JSON.parse(unknownArgument.json.result.content[0].text).error.code).toBe('invalid_request');
      const meta = await postMcp(org, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_agents","arguments":{},"_meta":{"extra":${deep}}}}`, headers);
      expect(meta.status).toBeLessThan(500);
      expect(JSON.stringify(meta.json)).not.toContain('internal_error');
      const member = await agentApi('POST', '/progress', `{"message":"m","extra":${deep}}`);
      expect(member.status).toBe(400);
      expect(member.body.error.code).toBe('invalid_request');
      expect(await operationCount()).toBe(before);
    });
  });

  describe('dates PostgreSQL cannot store', () => {
    const unstorable = ['0000-01-01T00:00:00Z', '2026-01-01T00:00:00+16:00', '2026-01-01T00:00:00-16:00', '0001-01-01T00:00:00+01:00', '9999-12-31T23:00:00-05:00'];

    it.each(unstorable)('%s is invalid_request in every date argument', async (date) => {
      for (const [tool, args] of [
        ['record_memory', { kind: 'fact', title: 'T', body: 'B', space_id: spaceId, valid_from: date }],
        ['record_memory', { kind: 'fact', title: 'T', body: 'B', space_id: spaceId, valid_until: date }],
        ['search_memory', { query: 'q', as_of: date }],
        ['list_tasks', { cursor: date }],
        ['resolve_decision', { decision_id: decisionId, outcome: 'approve', remember: { until: date } }],
      ] as const) {
        const error = await mcp.callError(tool, args);
        expect({ tool, code: error.code }).toEqual({ tool, code: 'invalid_request' });
      }
      const recorded = await agentApi('POST', '/memory', { kind: 'fact', title: 'T', body: 'B', valid_from: date });
      expect(recorded.status).toBe(400);
      expect(recorded.body.error.code).toBe('invalid_request');
      const [{ count }] = await org.service.database.rows<{ count: number }>(sql`SELECT count(*)::int AS count FROM memory_items WHERE title = 'T'`);
      expect(count).toBe(0);
    });

    it('the first and last storable instants and the widest offsets are kept and read back', async () => {
      const item = await mcp.callOk('record_memory', {
        kind: 'fact',
        title: 'Edges',
        body: 'B',
        space_id: spaceId,
        valid_from: '0001-01-01T00:00:00-15:59',
        valid_until: '9999-12-31T23:59:59+15:59',
      });
      expect(item.valid_from).toBe('0001-01-01T15:59:00.000000Z');
      expect(item.valid_until).toBe('9999-12-31T08:00:59.000000Z');
      expect((await mcp.callOk('get_memory', { memory_id: item.id })).valid_until).toBe(item.valid_until);
    });
  });

  describe('a tampered next_cursor', () => {
    it('of search_memory (a rank out of range, an impossible date) is invalid_request, also through the agent API', async () => {
      for (const title of ['Cursor one', 'Cursor two']) {
        await mcp.callOk('record_memory', { kind: 'fact', title, body: 'paging cursor test', space_id: spaceId });
      }
      const first = await mcp.callOk('search_memory', { query: 'cursor', limit: 1 });
      expect(first.next_cursor).toEqual(expect.any(String));
      const parts = JSON.parse(Buffer.from(first.next_cursor, 'base64url').toString('utf8'));
      // [method, tier boundary, tier, rank, recorded_at, search fingerprint] (org/memory/search.ts)
      expect(parts).toHaveLength(6);
      const withPart = (index: number, value: unknown) => parts.map((part: unknown, at: number) => (at === index ? value : part));
      const tampered = [
        withPart(3, '1e40'),
        withPart(3, '1e-50'),
        withPart(3, ' '),
        withPart(3, '0x10'),
        withPart(4, '2026-02-30T00:00:00Z'),
        withPart(4, '0000-01-01T00:00:00Z'),
        withPart(4, '2026-01-01T00:00:00+16:00'),
        withPart(3, 5),
        withPart(1, '2026-02-30T00:00:00Z'),
        withPart(2, 2),
        // A first-tier cursor must carry its tier's boundary.
        withPart(1, null).map((part: unknown, at: number) => (at === 2 ? 0 : part)),
      ].map((tamperedParts) => Buffer.from(JSON.stringify(tamperedParts)).toString('base64url'));
      for (const cursor of tampered) {
        const error = await mcp.callError('search_memory', { query: 'cursor', limit: 1, cursor });
        expect({ cursor, code: error.code }).toEqual({ cursor, code: 'invalid_request' });
        const answer = await agentApi('GET', `/memory?query=cursor&limit=1&cursor=${cursor}`);
        expect({ cursor, status: answer.status, code: answer.body.error?.code }).toEqual({ cursor, status: 400, code: 'invalid_request' });
      }
      // The untampered cursor still pages.
      const second = await mcp.callOk('search_memory', { query: 'cursor', limit: 1, cursor: first.next_cursor });
      expect(second.items).toHaveLength(1);
      expect(second.items[0].id).not.toBe(first.items[0].id);
    });

    it('of list_tasks (an impossible date or offset) is invalid_request', async () => {
      for (const cursor of ['2026-02-30T00:00:00Z', '2026-01-01T00:00:00+16:00', '0000-01-01', '2026-01-01T00:00:00+99:99']) {
        const error = await mcp.callError('list_tasks', { cursor });
        expect({ cursor, code: error.code }).toEqual({ cursor, code: 'invalid_request' });
      }
    });
  });
});
