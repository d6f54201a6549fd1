/**
 * Issue 21 item 8, end to end: the official MCP clients as installed from their registries — the TypeScript SDK
 * client (`@modelcontextprotocol/client` 2.4.0) and the Python SDK client (`mcp` 2.3.0, test/helpers/python.ts) —
 * ask for a high-risk `wire_money` that waits for the person's own decision (test/helpers/mail-org.ts). The
 * client points the person at the decision page (a task naming it, or a URL request), the person signs in and
 * approves there in Chromium, and the client ends with the completed result; the bank connector is called once
 * per action, and the decision is recorded as resolved by that person on the web (`resolved_via = 'inbox'`).
 * A client speaking 2025-06-18 sees today's paused operation, plus its `decision_url`, and nothing else.
 */
import { createInterface } from 'node:readline';
import { Client, specTypeSchemas, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { sql } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { BEA, startMailOrg, type MailOrg } from '../helpers/mail-org.js';
import { connectAt, MODERN } from '../helpers/mcp-revisions.js';
import { connectClient, type ConnectedClient } from '../helpers/oauth-flow.js';
import { ALL_SCOPES } from '../helpers/org-mcp.js';
import { launchChromium } from '../helpers/page-check.js';
import { ensurePythonSdk, spawnPythonScript } from '../helpers/python.js';

type Person = { email: string; password: string };

describe.each(engines)('the official MCP clients take a paused action to the person and back, on %s', (engine) => {
  let mail: MailOrg;
  let browser: Browser;
  let bea: ConnectedClient;
  const closing: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    await ensurePythonSdk();
    mail = await startMailOrg(engine);
    browser = await launchChromium();
    bea = await connectClient(mail.org, { scopes: ALL_SCOPES, email: BEA.email, password: BEA.password, clientName: 'Bea clients' });
  }, 600_000);
  afterAll(async () => {
    for (const close of closing) await close();
    await browser?.close();
    await mail?.close();
  });

  const mcpUrl = () => `${mail.org.url}/mcp`;
  const bearer = () => ({ authorization: `Bearer ${bea.accessToken}` });
  const pageOf = (decisionId: string) => `${mail.org.url}/inbox/decisions/${decisionId}`;
  const wire = (reference: string, amount: number) => ({ capability_id: mail.wireMoney, input: { amount, reference }, space_id: mail.general });
  const bankCalls = (reference: string) => mail.bank.calls.map((call) => JSON.parse(call.body).input).filter((input) => input?.reference === reference);

  async function row<T extends Record<string, unknown>>(query: ReturnType<typeof sql>): Promise<T> {
    const [found] = await mail.org.service.database.rows<T>(query);
    return found;
  }

  /** The decision approved by Bea on the page (the web, not a client), and its operation's status. */
  async function expectApprovedOnTheWeb(decisionId: string) {
    const [person] = await mail.org.service.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${BEA.email}`);
    expect(await row(sql`SELECT status, resolved_by, resolved_via FROM decisions WHERE id = ${decisionId}`)).toEqual({
      status: 'approved',
      resolved_by: person.id,
      resolved_via: 'inbox',
    });
  }

  /** Waits until the decision's operation has run (the connector answered). */
  async function operationSucceeded(decisionId: string) {
    const status = async () =>
      (await row<{ status: string }>(sql`SELECT o.status FROM operations o JOIN decisions d ON d.operation_id = o.id WHERE d.id = ${decisionId}`)).status;
    await expect.poll(status, { timeout: 15_000 }).toBe('succeeded');
  }

  /** The person opens the URL in Chromium, signs in (a fresh browser is signed out), and approves. */
  async function approveOnThePage(url: string, person: Person = BEA) {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(url);
      expect(new URL(page.url()).pathname).toBe('/signin');
      await page.getByLabel('Email').fill(person.email);
      await page.getByLabel('Password').fill(person.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(url);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Wire money: pending');
      await page.getByRole('button', { name: 'Approve' }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Wire money: approved');
    } finally {
      await context.close();
    }
  }

  it('TypeScript client at 2025-11-25: the call runs as a task, input_required names the page, the person approves, tasks/result is the result', async () => {
    // Declares URL elicitation and tasks (2025-11-25 client capabilities); only its revision is offered.
    const client = new Client(
      { name: 'ts-tasks-client', version: '2.4.0' },
      { supportedProtocolVersions: ['2025-11-25'], capabilities: { elicitation: { url: {} }, tasks: { list: {}, cancel: {} } } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers: bearer() } });
    await client.connect(transport);
    closing.push(async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    });
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } } });

    const created = (await client.callTool({ name: 'execute_capability', arguments: wire('TS-TASK', 120), task: { ttl: 60_000 } })) as CallToolResult & { task?: any };
    const taskId: string = created.task.taskId;
    const getTask = () => client.request({ method: 'tasks/get', params: { taskId } }, specTypeSchemas.GetTaskResult);
    await expect.poll(async () => (await getTask()).status, { timeout: 15_000 }).toBe('input_required');

    // The task names the decision and its page: what a host shows the person.
    const waiting = await getTask();
    const [, decisionId, url] = /^Waiting for a person's decision (\S+): (\S+)$/.exec(waiting.statusMessage ?? '') ?? [];
    expect(url).toBe(pageOf(decisionId));
    expect(await row(sql`SELECT status FROM decisions WHERE id = ${decisionId}`)).toEqual({ status: 'pending' });
    expect(bankCalls('TS-TASK')).toEqual([]);

    await approveOnThePage(url);
    const result = await client.request({ method: 'tasks/result', params: { taskId } }, specTypeSchemas.CallToolResult);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ operation_id: taskId, status: 'succeeded', decision_id: decisionId });
    expect((await getTask()).status).toBe('completed');
    await expectApprovedOnTheWeb(decisionId);
    expect(bankCalls('TS-TASK')).toEqual([{ amount: 120, reference: 'TS-TASK' }]);
  });

  it('TypeScript client at 2026-07-28: the paused call is an input_required URL request the SDK hands to the person; its retry answers the succeeded operation', async () => {
    const opened: string[] = [];
    const client = new Client({ name: 'ts-modern-client', version: '2.4.0' }, { versionNegotiation: { mode: { pin: MODERN } }, capabilities: { elicitation: { url: {} } } });
    // The SDK's own multi-round-trip driver: each input request goes to this handler, then it retries the call.
    client.setRequestHandler('elicitation/create', async (request) => {
      if (request.params.mode !== 'url') return { action: 'decline' };
      opened.push(request.params.url);
      const decisionId = request.params.url.split('/').at(-1)!;
      expect(await row(sql`SELECT status FROM decisions WHERE id = ${decisionId}`)).toEqual({ status: 'pending' });
      await approveOnThePage(request.params.url);
      await operationSucceeded(decisionId);
      return { action: 'accept' };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl()), { requestInit: { headers: bearer() } }));
    closing.push(() => client.close());
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);

    const answer = (await client.callTool({ name: 'execute_capability', arguments: wire('TS-MODERN', 121) })) as CallToolResult;
    expect(answer.isError).toBeFalsy();
    const operation = answer.structuredContent as { operation_id: string; status: string; decision_id: string };
    expect(opened).toEqual([pageOf(operation.decision_id)]);
    expect(operation.status).toBe('succeeded');
    await expectApprovedOnTheWeb(operation.decision_id);
    expect(bankCalls('TS-MODERN')).toEqual([{ amount: 121, reference: 'TS-MODERN' }]);
  });

  it('Python client at 2026-07-28 (auto mode): prints the URL it is asked to open, and after the approval its retry prints the completed result', async () => {
    const script = spawnPythonScript('decide_in_browser.py', [mcpUrl(), bea.accessToken, 'execute_capability', JSON.stringify(wire('PY-MODERN', 122))]);
    let stderr = '';
    script.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => script.on('close', resolve));
    closing.push(async () => void script.kill());
    const lines = createInterface({ input: script.stdout })[Symbol.asyncIterator]();
    const nextLine = async () => {
      const { value, done } = await lines.next();
      if (done) throw new Error(`the Python client ended without a line: ${stderr}`);
      return JSON.parse(value as string);
    };

    const { open } = await nextLine();
    const decisionId = open.split('/').at(-1);
    expect(open).toBe(pageOf(decisionId));
    expect(bankCalls('PY-MODERN')).toEqual([]);
    await approveOnThePage(open);
    await operationSucceeded(decisionId);
    // The person is back: the client accepts and the SDK retries the call.
    script.stdin.write('done\n');

    const run = await nextLine();
    expect(await exited, stderr).toBe(0);
    expect(run).toMatchObject({ protocol_version: MODERN, asked: [open], is_error: false, structured: { status: 'succeeded', decision_id: decisionId } });
    await expectApprovedOnTheWeb(decisionId);
    expect(bankCalls('PY-MODERN')).toEqual([{ amount: 122, reference: 'PY-MODERN' }]);
  });

  it('TypeScript client at 2025-06-18 sees no difference: today’s paused operation plus decision_url, no task, no URL request', async () => {
    const { client, close } = await connectAt(mcpUrl(), bearer(), '2025-06-18', 'ts-2025-06-18-client');
    closing.push(close);
    expect(client.getServerCapabilities()).toEqual({ tools: {} });
    const answer = (await client.callTool({ name: 'execute_capability', arguments: { ...wire('TS-OLD', 123), wait_seconds: 5 }, task: { ttl: 1000 } })) as CallToolResult & {
      task?: unknown;
    };
    expect(answer.isError).toBeFalsy();
    expect('task' in answer).toBe(false);
    const paused = answer.structuredContent as { operation_id: string; status: string; decision_id: string; decision_url: string };
    expect(paused).toMatchObject({ status: 'paused', decision_url: pageOf(paused.decision_id) });
    // Exactly what get_operation answers for it, as before the newer revisions.
    const read = (await client.callTool({ name: 'get_operation', arguments: { operation_id: paused.operation_id } })) as CallToolResult;
    expect(read.structuredContent).toEqual(paused);
    expect(JSON.parse((answer.content[0] as { text: string }).text)).toEqual(paused);
    expect(await row(sql`SELECT status FROM decisions WHERE id = ${paused.decision_id}`)).toEqual({ status: 'pending' });
    expect(bankCalls('TS-OLD')).toEqual([]);
  });
});
