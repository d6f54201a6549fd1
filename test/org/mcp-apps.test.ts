/**
 * MCP Apps (issue 21 item 4): the approval card, an operation's timeline and the task board as `ui://` resources,
 * read through the official TypeScript client and rendered in Chromium by a minimal host built on the extension's
 * own AppBridge (helpers/app-host.ts), with real tool results from a real org on each engine.
 */
import { Client, specTypeSchemas, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { sql } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppHost, checkAppFrame, type AppHost } from '../helpers/app-host.js';
import { engines } from '../helpers/databases.js';
import { BEA, startMailOrg, type MailOrg } from '../helpers/mail-org.js';
import { connectClient } from '../helpers/oauth-flow.js';
import { ALL_SCOPES, settleOperation } from '../helpers/org-mcp.js';
import { launchChromium } from '../helpers/page-check.js';

const UI = 'io.modelcontextprotocol/ui';
const APP_MIME = 'text/html;profile=mcp-app';
const APPROVAL = 'ui://atrium-org/approval-card';
const TIMELINE = 'ui://atrium-org/operation-timeline';
const BOARD = 'ui://atrium-org/task-board';

describe.each(engines)('MCP Apps (%s)', (engine) => {
  let mail: MailOrg;
  let browser: Browser;
  let host: AppHost;
  const clients: Client[] = [];

  beforeAll(async () => {
    [mail, browser, host] = await Promise.all([startMailOrg(engine), launchChromium(), startAppHost()]);
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) await client.close();
    await Promise.all([mail?.close(), browser?.close(), host?.close()]);
  });

  /** A person's client, through the real OAuth flow, declaring the Apps extension as Claude or VS Code would. */
  async function connectHost(person: { email: string; password: string }, clientName: string, scopes = ALL_SCOPES): Promise<Client> {
    const connected = await connectClient(mail.org, { email: person.email, password: person.password, clientName, scopes });
    const client = new Client({ name: clientName, version: '1.0.0' }, { capabilities: { extensions: { [UI]: { mimeTypes: [APP_MIME] } } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${mail.org.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${connected.accessToken}` } } }));
    clients.push(client);
    return client;
  }

  async function readApp(client: Client, uri: string): Promise<string> {
    const { contents } = await client.readResource({ uri });
    expect(contents).toHaveLength(1);
    expect(contents[0]).toMatchObject({ uri, mimeType: APP_MIME });
    return (contents[0] as { text: string }).text;
  }

  async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return result;
  }

  async function setInAppDecisions(allowed: boolean): Promise<void> {
    await mail.org.service.database.rows(sql`UPDATE organization SET in_app_decisions = ${allowed} RETURNING id`);
  }

  it('links the three apps from their tools for a host that renders them, and only for such a host', async () => {
    const appHost = await connectHost(BEA, 'Apps host');
    expect(appHost.getServerCapabilities()?.extensions).toEqual({ [UI]: {} });
    const { tools } = await appHost.listTools();
    const links = Object.fromEntries(tools.filter((tool) => tool._meta?.ui).map((tool) => [tool.name, (tool._meta!.ui as { resourceUri: string }).resourceUri]));
    expect(links).toEqual({ execute_capability: APPROVAL, list_decisions: APPROVAL, get_operation: TIMELINE, list_tasks: BOARD });

    const { resources } = await appHost.listResources();
    expect(resources.map(({ uri, mimeType }) => ({ uri, mimeType }))).toEqual([APPROVAL, TIMELINE, BOARD].map((uri) => ({ uri, mimeType: APP_MIME })));
    for (const uri of [APPROVAL, TIMELINE, BOARD]) {
      const html = await readApp(appHost, uri);
      expect(html.startsWith('<!doctype html>')).toBe(true);
      // Self-contained: nothing is loaded from anywhere.
      expect(html).not.toMatch(/\bsrc=|<link\b|fetch\(|XMLHttpRequest/);
    }

    const plain = await mail.connect(BEA, 'Text-only client');
    const { tools: plainTools } = await plain.client.listTools();
    expect(plainTools.filter((tool) => tool._meta)).toEqual([]);
    const decisions = (await plain.client.callTool({ name: 'list_decisions', arguments: {} })) as CallToolResult;
    expect(decisions.isError).toBeFalsy();
    expect(decisions._meta).toBeUndefined();
  });

  it('shows a host speaking the contract revision 2025-06-18 no apps: tools only, no links, no resources', async () => {
    const connected = await connectClient(mail.org, { email: BEA.email, password: BEA.password, clientName: 'Old apps host', scopes: ALL_SCOPES });
    const oldHost = new Client({ name: 'Old apps host', version: '1.0.0' }, { supportedProtocolVersions: ['2025-06-18'], capabilities: { extensions: { [UI]: { mimeTypes: [APP_MIME] } } } });
    await oldHost.connect(new StreamableHTTPClientTransport(new URL(`${mail.org.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${connected.accessToken}` } } }));
    clients.push(oldHost);
    expect(oldHost.getServerCapabilities()).toEqual({ tools: {} });
    expect((await oldHost.listTools()).tools.filter((tool) => tool._meta)).toEqual([]);
    await expect(oldHost.request({ method: 'resources/list', params: {} }, specTypeSchemas.ListResourcesResult)).rejects.toMatchObject({ code: -32601 });
    const decisions = await call(oldHost, 'list_decisions', {});
    expect(decisions._meta).toBeUndefined();
  });

  it('refuses an unknown app, and an app whose tools the token may not read', async () => {
    const narrow = await connectHost(BEA, 'Memory-only host', ['memory:read']);
    await expect(narrow.readResource({ uri: 'ui://atrium-org/nothing' })).rejects.toMatchObject({ code: -32602, data: { uri: 'ui://atrium-org/nothing' } });
    await expect(narrow.readResource({ uri: BOARD })).rejects.toThrow(/needs one of the scopes task:read/);
    expect(await readApp(narrow, TIMELINE)).toContain('Operation timeline');
  });

  it("shows a paused action's facts on the approval card, whose Approve opens the decision page where the person decides", async () => {
    const appHost = await connectHost(BEA, 'Claude');
    const input = { amount: 1200, to: 'ACME <b>Ltd</b>' };
    const toolInput = { capability_id: mail.wireMoney, input, space_id: mail.general, wait_seconds: 10 };
    const result = await call(appHost, 'execute_capability', toolInput);
    const operation = result.structuredContent as { status: string; decision_id: string; operation_id: string };
    expect(operation.status).toBe('paused');
    const data = result._meta?.['atrium/app'] as any;
    expect(data).toMatchObject({ decision_page: `${mail.org.url}/inbox/decisions/`, in_app_decisions: false, resolvable: [] });
    expect(data.decisions.map((decision: any) => decision.id)).toEqual([operation.decision_id]);

    const page = await browser.newPage();
    try {
      const frame = await host.render(page, { html: await readApp(appHost, APPROVAL), toolInput, toolResult: result });
      await frame.getByRole('heading', { name: 'Wire money' }).waitFor();
      const facts = await frame.locator('article dl').evaluate((list) =>
        Object.fromEntries([...list.querySelectorAll('dt')].map((term) => [term.textContent, term.nextElementSibling!.textContent])),
      );
      expect(facts).toMatchObject({ Capability: 'wire_money', Agent: 'Claude (connected application)', Risk: 'high', Cost: '0 budget units', Status: 'pending' });
      expect(facts['Why it waits']).toMatch(/high/);
      // The exact arguments, as text: markup in them is shown, never made.
      expect(JSON.parse((await frame.locator('pre').textContent())!)).toEqual(input);
      expect(await frame.locator('pre b').count()).toBe(0);
      await checkAppFrame(page, frame, 'mcp-app-approval-card');

      await frame.getByRole('button', { name: 'Approve or deny on the decision page' }).click();
      const link = `${mail.org.url}/inbox/decisions/${operation.decision_id}`;
      await expect.poll(() => host.links.at(-1)).toBe(link);
      await expect.poll(() => frame.getByRole('status').last().textContent()).toBe('The decision page is open in your browser.');
    } finally {
      await page.close();
    }

    // The person decides on the page, in their own browser session: the AI client never holds it.
    const person = await browser.newPage();
    try {
      await person.goto(host.links.at(-1)!);
      await person.getByLabel('Email').fill(BEA.email);
      await person.getByLabel('Password').fill(BEA.password);
      await person.getByRole('button', { name: 'Sign in' }).click();
      await person.waitForURL(host.links.at(-1)!);
      await person.getByRole('button', { name: 'Approve' }).click();
      // Closing the page before the decision's answer arrives could cancel the form's POST on its way.
      await expect.poll(() => person.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Wire money: approved');
    } finally {
      await person.close();
    }
    const done = await call(appHost, 'get_operation', { operation_id: operation.operation_id });
    await expect.poll(async () => ((await call(appHost, 'get_operation', { operation_id: operation.operation_id })).structuredContent as any).status, { timeout: 15_000 }).toBe('succeeded');
    expect(done.structuredContent).toMatchObject({ decision_id: operation.decision_id });
  });

  it('with in-app decisions allowed, Approve on the card resolves the decision through the host', async () => {
    await setInAppDecisions(true);
    try {
      const agentClient = await mail.connect(BEA, 'Agent runner');
      const { operationId, decisionId } = await mail.pauseWire(agentClient, { amount: 75, to: 'Printer Co' });
      // Bea's other client, which holds governance:admin and did not ask for the action, may resolve it.
      const appHost = await connectHost(BEA, 'Claude for decisions');
      const result = await call(appHost, 'list_decisions', {});
      expect(result._meta?.['atrium/app']).toMatchObject({ in_app_decisions: true, resolvable: [decisionId] });

      const page = await browser.newPage();
      try {
        const frame = await host.render(page, {
          html: await readApp(appHost, APPROVAL),
          toolInput: {},
          toolResult: result,
          callTool: async (params) => (await appHost.callTool(params)) as CallToolResult,
        });
        const card = frame.getByRole('article', { name: 'Wire money' });
        await card.getByRole('button', { name: 'Approve' }).click();
        await expect.poll(() => card.getByRole('status').textContent(), { timeout: 15_000 }).toBe('Decision approved.');
        expect(host.links).not.toContain(`${mail.org.url}/inbox/decisions/${decisionId}`);
      } finally {
        await page.close();
      }
      const settled = await settleOperation(agentClient, operationId);
      expect(settled.status).toBe('succeeded');
      expect(settled.decision).toMatchObject({ status: 'approved' });

      // A card shown from an older result: the server refuses, and the card sends the person to the page instead.
      const stale = await browser.newPage();
      try {
        const frame = await host.render(stale, { html: await readApp(appHost, APPROVAL), toolInput: {}, toolResult: result, callTool: async (params) => (await appHost.callTool(params)) as CallToolResult });
        const card = frame.getByRole('article', { name: 'Wire money' });
        await card.getByRole('button', { name: 'Deny' }).click();
        await expect.poll(() => card.getByRole('status').textContent(), { timeout: 15_000 }).toMatch(/^Not resolved here: .*approved/);
        await card.getByRole('button', { name: 'Decide on the decision page' }).click();
        await expect.poll(() => host.links.at(-1)).toBe(`${mail.org.url}/inbox/decisions/${decisionId}`);
      } finally {
        await stale.close();
      }

      // The client whose action it is still cannot decide it: its card sends the person to the page.
      const asker = await connectHost(BEA, 'Agent runner with apps');
      const own = await call(asker, 'execute_capability', { capability_id: mail.wireMoney, input: { amount: 6, to: 'Cafe' }, space_id: mail.general, wait_seconds: 10 });
      expect(own._meta?.['atrium/app']).toMatchObject({ in_app_decisions: true, resolvable: [] });
    } finally {
      await setInAppDecisions(false);
    }
  });

  it("draws an operation's timeline and the task board from their tools' results", async () => {
    const appHost = await connectHost(BEA, 'Board host');
    const started = await call(appHost, 'execute_capability', { capability_id: mail.wireMoney, input: { amount: 9, to: 'Timeline Inc' }, space_id: mail.general, wait_seconds: 10 });
    const operationId = (started.structuredContent as { operation_id: string }).operation_id;
    const timeline = await call(appHost, 'get_operation', { operation_id: operationId });

    const page = await browser.newPage();
    try {
      const frame = await host.render(page, { html: await readApp(appHost, TIMELINE), toolInput: { operation_id: operationId }, toolResult: timeline });
      await frame.getByRole('heading', { name: 'Timeline', exact: true }).waitFor();
      expect(await frame.locator('#status').textContent()).toBe('Operation paused.');
      const { progress } = timeline.structuredContent as { progress: { message: string }[] };
      expect(await frame.locator('ol.timeline li').allTextContents()).toEqual(progress.map((event) => expect.stringContaining(event.message)));
      if (progress.length === 0) expect(await frame.getByText('Nothing recorded yet.').count()).toBe(1);
      // Paused: the timeline carries the approval card of the decision it waits for.
      await frame.getByRole('article', { name: 'Wire money' }).waitFor();
      await checkAppFrame(page, frame, 'mcp-app-operation-timeline');
    } finally {
      await page.close();
    }

    for (const title of ['Draft the <i>launch</i> post', 'Review the pricing page']) {
      await call(appHost, 'create_task', { space_id: mail.general, title, description: `About: ${title}` });
    }
    const board = await call(appHost, 'list_tasks', {});
    const boardPage = await browser.newPage();
    try {
      const frame = await host.render(boardPage, { html: await readApp(appHost, BOARD), toolInput: {}, toolResult: board });
      const open = frame.getByRole('region', { name: /^Open/ });
      await open.getByText('Review the pricing page', { exact: true }).waitFor();
      expect(await open.getByRole('heading').first().textContent()).toMatch(/^Open \(\d+\)$/);
      expect(await open.getByText('Draft the <i>launch</i> post', { exact: true }).count()).toBe(1);
      expect(await frame.locator('i').count()).toBe(0);
      await checkAppFrame(boardPage, frame, 'mcp-app-task-board');
    } finally {
      await boardPage.close();
    }
  });
});
