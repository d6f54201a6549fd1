/**
 * The machinery every org tool shares, end to end through OAuth-issued tokens and the MCP SDK client: the
 * registry's space rule, idempotency keys, wait_seconds and the 25-second deadline, and operations that run
 * from the durable job queue. The rules are exercised with tools and a runner that exist only in this
 * test's server, so they are tested once here rather than through each real tool.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { orgTools } from '../../src/org/mcp/server.js';
import { defineOrgTool } from '../../src/org/mcp/tools.js';
import { orgSecrets } from '../../src/org/schema.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient, openMcpSession, postMcp } from '../helpers/oauth-flow.js';
import { startTool, testKind } from '../helpers/test-work.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';

const OTHER = { email: 'other@example.com', password: 'other-password-12' };
const NOMAD = { email: 'nomad@example.com', password: 'nomad-password-12' };

/** A write that takes longer than the test server's budget, then commits one row named by its argument. */
const slowWriteTool = defineOrgTool({
  name: 'test_slow_write',
  description: 'test only: a slow write',
  scope: null,
  needsSpace: false,
  effect: 'write',
  input: z.object({ name: z.string(), delay_ms: z.number().int() }).strict(),
  output: z.object({ name: z.string() }),
  async run({ name, delay_ms }, call) {
    await new Promise((resolve) => setTimeout(resolve, delay_ms));
    await call.db.insert(orgSecrets).values({ name, value: 'written once' });
    return { name };
  },
});

const DEADLINE_MS = 1_500;

describe.each(engines)('org operations and the tool registry on %s', (engine) => {
  let org: TestOrg;
  let owner: OrgMcp;
  let spaceId: string;

  beforeAll(async () => {
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-ops-')), 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Test Co }
people:
  - { email: ${OTHER.email}, name: Other, password_env: OPS_OTHER_PASSWORD }
  - { email: ${NOMAD.email}, name: Nomad, password_env: OPS_NOMAD_PASSWORD }
spaces:
  - { key: general, name: General, members: [${OWNER.email}, ${OTHER.email}] }
  - { key: private, name: Private, members: [${OTHER.email}] }
`,
    );
    process.env.OPS_OTHER_PASSWORD = OTHER.password;
    process.env.OPS_NOMAD_PASSWORD = NOMAD.password;
    org = await startOrg(engine, {
      config: { orgFile },
      mcpTools: [...orgTools, startTool, slowWriteTool],
      operationKinds: [testKind('test')],
      toolDeadlineMs: DEADLINE_MS,
    });
    owner = await connectOrgMcp(org);
    const context = await owner.callOk('service_context');
    spaceId = context.spaces.find((space: { key: string }) => space.key === 'general').id;
  });
  afterAll(async () => {
    await owner?.close();
    await org?.close();
  });

  const count = async (table: string) =>
    Number(((await org.service.database.rows<{ n: number }>(sql.raw(`SELECT count(*)::int AS n FROM ${table}`)))[0]).n);

  it('lists outputSchema for every tool, and the shared arguments only where they belong', async () => {
    const { tools } = await owner.client.listTools();
    for (const tool of tools) expect(tool.outputSchema, tool.name).toMatchObject({ type: 'object' });
    const start = tools.find((tool) => tool.name === 'test_start')!;
    expect(Object.keys(start.inputSchema.properties ?? {}).sort()).toEqual(['idempotency_key', 'mode', 'space_id', 'text', 'wait_seconds']);
    expect(start.annotations?.readOnlyHint).toBe(false);
    const context = tools.find((tool) => tool.name === 'service_context')!;
    expect(Object.keys(context.inputSchema.properties ?? {})).toEqual([]);
    expect(context.annotations?.readOnlyHint).toBe(true);
  });

  it('waits for quick work and returns the finished operation', async () => {
    const operation = await owner.callOk('test_start', { text: 'hello', space_id: spaceId });
    expect(operation).toMatchObject({ kind: 'ask', status: 'succeeded', result: { echo: 'hello', by: 'test' }, space_id: spaceId, progress: [] });
    expect(operation.operation_id).toMatch(/^op_/);
    expect(Date.parse(operation.updated_at)).toBeGreaterThanOrEqual(Date.parse(operation.created_at));
    expect(await owner.callOk('get_operation', { operation_id: operation.operation_id })).toEqual(operation);
  });

  it('returns at once with wait_seconds 0, and get_operation shows the work finish', async () => {
    const started = await owner.callOk('test_start', { text: 'later', mode: 'slow', space_id: spaceId, wait_seconds: 0 });
    expect(['queued', 'running']).toContain(started.status);
    let operation = started;
    for (let tries = 0; tries < 100 && operation.status !== 'succeeded'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      operation = await owner.callOk('get_operation', { operation_id: started.operation_id });
    }
    expect(operation).toMatchObject({ status: 'succeeded', result: { echo: 'later', by: 'test' } });
  });

  it('stops waiting when the work pauses for a person: a pause is an answer, not an error', async () => {
    const operation = await owner.callOk('test_start', { text: 'risky', mode: 'pause', space_id: spaceId, wait_seconds: 20 });
    expect(operation).toMatchObject({ status: 'paused', decision_id: 'dec_test' });
  });

  it('waits at most wait_seconds for work that goes on elsewhere', async () => {
    const before = Date.now();
    const operation = await owner.callOk('test_start', { text: 'agent', mode: 'elsewhere', space_id: spaceId, wait_seconds: 1 });
    expect(operation.status).toBe('running');
    expect(Date.now() - before).toBeGreaterThanOrEqual(1_000);
  });

  it("shows an operation only to the person who started it: anyone else's is not_found", async () => {
    const operation = await owner.callOk('test_start', { text: 'mine', space_id: spaceId });
    const other = await connectOrgMcp(org, { email: OTHER.email, password: OTHER.password });
    try {
      expect(await other.callError('get_operation', { operation_id: operation.operation_id })).toMatchObject({ code: 'not_found' });
      expect(await other.callError('get_operation', { operation_id: 'op_doesnotexist' })).toMatchObject({ code: 'not_found', message: 'operation not found' });
    } finally {
      await other.close();
    }
  });

  it('refuses a space the person is not in as not_found, and a person without spaces with no_space', async () => {
    const other = await connectOrgMcp(org, { email: OTHER.email, password: OTHER.password });
    const privateSpace = (await other.callOk('service_context')).spaces.find((space: { key: string }) => space.key === 'private').id;
    await other.close();
    const operations = await count('operations');
    expect(await owner.callError('test_start', { text: 'x', space_id: privateSpace })).toMatchObject({ code: 'not_found', message: 'space not found' });

    const nomad = await connectOrgMcp(org, { email: NOMAD.email, password: NOMAD.password });
    try {
      expect((await nomad.callOk('service_context')).spaces).toEqual([]);
      const refusal = await nomad.callError('test_start', { text: 'x', space_id: spaceId });
      expect(refusal.code).toBe('no_space');
      expect(refusal.message).toContain('stop');
    } finally {
      await nomad.close();
    }
    expect(await count('operations')).toBe(operations);
  });

  it('names each bad argument, including the shared ones, and writes nothing', async () => {
    const operations = await count('operations');
    const keys = await count('idempotency_keys');
    for (const [args, field] of [
      [{ text: 'x', space_id: spaceId, wait_seconds: 21 }, 'wait_seconds'],
      [{ text: 'x', space_id: spaceId, wait_seconds: 'soon' }, 'wait_seconds'],
      [{ text: 'x', space_id: spaceId, idempotency_key: '' }, 'idempotency_key'],
      [{ text: 'x', space_id: spaceId, idempotency_key: 'k'.repeat(201) }, 'idempotency_key'],
      [{ text: 'x', space_id: spaceId, surprise: true }, 'surprise'],
      [{ space_id: spaceId }, 'text'],
    ] as const) {
      const refusal = await owner.callError('test_start', args);
      expect(refusal.code).toBe('invalid_request');
      expect(refusal.details.issues.map((issue: { field: string }) => issue.field)).toContain(field);
    }
    expect(await count('operations')).toBe(operations);
    expect(await count('idempotency_keys')).toBe(keys);
  });

  it('returns the original operation for a retry with the same key and arguments, and never starts a second', async () => {
    const args = { text: 'once', space_id: spaceId, idempotency_key: `key-${engine}-once` };
    const first = await owner.callOk('test_start', args);
    const operations = await count('operations');
    const again = await owner.callOk('test_start', { ...args, wait_seconds: 0 });
    expect(again.operation_id).toBe(first.operation_id);
    expect(again.status).toBe('succeeded');
    expect(await count('operations')).toBe(operations);
  });

  it('refuses the same key with other arguments as idempotency_conflict', async () => {
    const key = `key-${engine}-conflict`;
    await owner.callOk('test_start', { text: 'first', space_id: spaceId, idempotency_key: key });
    const operations = await count('operations');
    expect(await owner.callError('test_start', { text: 'second', space_id: spaceId, idempotency_key: key })).toMatchObject({
      code: 'idempotency_conflict',
    });
    expect(await count('operations')).toBe(operations);
  });

  it('forgets a key after 24 hours: the same key then starts new work', async () => {
    const key = `key-${engine}-expired`;
    const first = await owner.callOk('test_start', { text: 'old', space_id: spaceId, idempotency_key: key });
    await org.service.database.db.execute(sql`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = ${key}`);
    const second = await owner.callOk('test_start', { text: 'new', space_id: spaceId, idempotency_key: key });
    expect(second.operation_id).not.toBe(first.operation_id);
    expect(second.result.echo).toBe('new');
  });

  it('keeps keys apart per client: another client may use the same key for its own work', async () => {
    const key = `key-${engine}-per-client`;
    const first = await owner.callOk('test_start', { text: 'a', space_id: spaceId, idempotency_key: key });
    const second = await connectOrgMcp(org);
    try {
      const other = await second.callOk('test_start', { text: 'a', space_id: spaceId, idempotency_key: key });
      expect(other.operation_id).not.toBe(first.operation_id);
    } finally {
      await second.close();
    }
  });

  it('starts one operation when retries with one key race', async () => {
    const args = { text: 'race', space_id: spaceId, idempotency_key: `key-${engine}-race`, wait_seconds: 0 };
    const operations = await count('operations');
    const results = await Promise.all(Array.from({ length: 8 }, () => owner.callOk('test_start', args)));
    expect(new Set(results.map((result) => result.operation_id)).size).toBe(1);
    expect(await count('operations')).toBe(operations + 1);
  });

  it('answers HTTP 500 past the budget while the work goes on, and the retry with the key returns what it produced', async () => {
    const { accessToken } = await connectClient(org, { scopes: [] });
    const headers = await openMcpSession(org, accessToken);
    const name = `slow-${engine}`;
    const call = (id: number) =>
      postMcp(
        org,
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_slow_write', arguments: { name, delay_ms: DEADLINE_MS + 500, idempotency_key: name } } },
        headers,
      );
    const late = await call(1);
    expect(late.status).toBe(500);
    expect(JSON.parse(late.json.result.content[0].text).error).toMatchObject({ code: 'budget_exceeded' });

    // The retry waits for the first call's transaction and returns its result: one row, written once.
    const retry = await call(2);
    expect(retry.status).toBe(200);
    expect(retry.json.result.structuredContent).toEqual({ name });
    const written = await org.service.database.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM org_secrets WHERE name = ${name}`);
    expect(written[0].n).toBe(1);
  });
});
