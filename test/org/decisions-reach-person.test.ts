/**
 * Decisions reach the person (issue 21 items 3 and 5): with the official TypeScript client (2.4.0), a paused
 * action names its decision page — in the operation (`decision_url`) for a client without URL-mode elicitation,
 * as the -32042 URL request for a 2025-11-25 client that takes it — and the person decides there in Chromium, in
 * their own browser session. With `decide_in_browser`, resolve_decision over MCP hands the decision to that page
 * whatever the client's scopes, and the decision stays pending until the person decides there.
 */
import { Client, ProtocolError, StreamableHTTPClientTransport, UrlElicitationRequiredError, type CallToolResult } from '@modelcontextprotocol/client';
import { sql } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { BEA, startMailOrg, type MailOrg } from '../helpers/mail-org.js';
import { connectClient } from '../helpers/oauth-flow.js';
import { ALL_SCOPES } from '../helpers/org-mcp.js';
import { OWNER } from '../helpers/org.js';
import { launchChromium } from '../helpers/page-check.js';

const MODERN = '2026-07-28';

interface ClientOptions {
  name: string;
  protocol: string;
  urlElicitation: boolean;
  /** What the client does with a URL it is asked to open (2026-07-28 input requests): the person's part. */
  onUrl?: (url: string) => Promise<void>;
}

interface SdkClient {
  client: Client;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** A person's client through the real OAuth flow; `urlElicitation` declares `elicitation.url` (2025-11-25). */
async function openClient(mail: MailOrg, person: { email: string; password: string }, options: ClientOptions): Promise<SdkClient> {
  const connected = await connectClient(mail.org, { scopes: ALL_SCOPES, email: person.email, password: person.password, clientName: options.name });
  const capabilities = options.urlElicitation ? { elicitation: { url: {} } } : {};
  // The 2026-07-28 client is pinned to it (server/discover, no initialize); a 2025 one offers only its revision.
  const client = new Client(
    { name: options.name, version: '1.0.0' },
    options.protocol === MODERN ? { versionNegotiation: { mode: { pin: MODERN } }, capabilities } : { supportedProtocolVersions: [options.protocol], capabilities },
  );
  if (options.onUrl) {
    const onUrl = options.onUrl;
    client.setRequestHandler('elicitation/create', async (request) => {
      if (request.params.mode !== 'url') return { action: 'decline' };
      await onUrl(request.params.url);
      return { action: 'accept' };
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(`${mail.org.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${connected.accessToken}` } },
  });
  await client.connect(transport);
  expect(client.getNegotiatedProtocolVersion()).toBe(options.protocol);
  return {
    client,
    call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>,
    async close() {
      if (options.protocol !== MODERN) await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** The URL request a call was answered with (2025-11-25 client/elicitation, "URL Elicitation Required Error"). */
async function urlRequestOf(call: Promise<unknown>): Promise<UrlElicitationRequiredError> {
  const error = await call.then(
    (result) => {
      throw new Error(`expected the URL request, got ${JSON.stringify(result)}`);
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(ProtocolError);
  expect((error as ProtocolError).code).toBe(-32042);
  return error as UrlElicitationRequiredError;
}

function resultOf(result: CallToolResult): any {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  const value = JSON.parse((result.content[0] as { text: string }).text);
  expect(result.structuredContent).toEqual(value);
  return value;
}

describe.each(engines)('decisions reach the person, on %s', (engine) => {
  let mail: MailOrg;
  let browser: Browser;
  const clients: SdkClient[] = [];

  async function open(person: { email: string; password: string }, options: ClientOptions): Promise<SdkClient> {
    const opened = await openClient(mail, person, options);
    clients.push(opened);
    return opened;
  }

  async function decisionStatus(id: string): Promise<string> {
    const [row] = await mail.org.service.database.rows<{ status: string }>(sql`SELECT status FROM decisions WHERE id = ${id}`);
    return row.status;
  }

  /** The person opens the page in Chromium, signs in when asked, and approves. */
  async function approveInBrowser(url: string, person: { email: string; password: string }): Promise<void> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(url);
    if (new URL(page.url()).pathname === '/signin') {
      await page.getByLabel('Email').fill(person.email);
      await page.getByLabel('Password').fill(person.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(url);
    }
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Wire money: approved');
    await context.close();
  }

  /**
   * A 2026-07-28 client taking URL elicitation whose person, shown a URL, opens it in Chromium and approves
   * (after `first`, a check of how things stand when the URL arrives); `opened` lists the URLs it was shown.
   */
  async function openApproving(person: { email: string; password: string }, name: string, first?: () => Promise<void>): Promise<{ client: SdkClient; opened: string[] }> {
    const opened: string[] = [];
    const onUrl = async (url: string) => {
      opened.push(url);
      await first?.();
      await approveInBrowser(url, person);
    };
    return { client: await open(person, { name, protocol: MODERN, urlElicitation: true, onUrl }), opened };
  }

  beforeAll(async () => {
    mail = await startMailOrg(engine);
    browser = await launchChromium();
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await browser?.close();
    await mail?.close();
  });

  it('gives a 2025-06-18 client the decision page in the paused operation, and get_operation repeats it', async () => {
    const bea = await open(BEA, { name: 'Bea old client', protocol: '2025-06-18', urlElicitation: false });
    const started = resultOf(await bea.call('execute_capability', { capability_id: mail.wireMoney, input: { amount: 5 }, space_id: mail.general, wait_seconds: 10 }));
    expect(started.status).toBe('paused');
    expect(started.decision_url).toBe(`${mail.org.url}/inbox/decisions/${started.decision_id}`);
    const polled = resultOf(await bea.call('get_operation', { operation_id: started.operation_id }));
    expect(polled).toMatchObject({ status: 'paused', decision_id: started.decision_id, decision_url: started.decision_url });
  });

  it('gives a 2025-11-25 client without URL elicitation the page URL too, not the URL request', async () => {
    const bea = await open(BEA, { name: 'Bea form-only client', protocol: '2025-11-25', urlElicitation: false });
    const started = resultOf(await bea.call('execute_capability', { capability_id: mail.wireMoney, input: { amount: 6 }, space_id: mail.general, wait_seconds: 10 }));
    expect(started).toMatchObject({ status: 'paused', decision_url: `${mail.org.url}/inbox/decisions/${started.decision_id}` });
  });

  it('asks a 2025-11-25 client taking URL elicitation to open the decision page; the person approves there and the retry has the result', async () => {
    const bea = await open(BEA, { name: 'Bea new client', protocol: '2025-11-25', urlElicitation: true });
    const args = { capability_id: mail.wireMoney, input: { amount: 70, reference: 'URL-1' }, space_id: mail.general, idempotency_key: 'wire-url-1', wait_seconds: 10 };
    const request = await urlRequestOf(bea.call('execute_capability', args));
    expect(request.elicitations).toHaveLength(1);
    const [elicitation] = request.elicitations;
    expect(elicitation).toMatchObject({ mode: 'url', url: `${mail.org.url}/inbox/decisions/${elicitation.elicitationId}` });
    expect(elicitation.message).toContain("waits for a person's decision");
    expect(await decisionStatus(elicitation.elicitationId)).toBe('pending');

    // The person, in their own browser session (never the AI client's token), signs in and approves.
    await approveInBrowser(elicitation.url, BEA);

    // The retry with the same key returns the operation, which ran once the person approved.
    const retried = resultOf(await bea.call('execute_capability', args));
    expect(retried.decision_id).toBe(elicitation.elicitationId);
    await expect.poll(async () => resultOf(await bea.call('get_operation', { operation_id: retried.operation_id })).status, { timeout: 15_000 }).toBe('succeeded');
    expect(mail.bank.calls.map((call) => JSON.parse(call.body).input)).toContainEqual({ amount: 70, reference: 'URL-1' });
  });

  it('asks a 2026-07-28 client taking URL elicitation with an input request; the person approves in the browser and the retry answers the operation', async () => {
    const { client: bea, opened } = await openApproving(BEA, 'Bea modern client');
    // No idempotency key: the retry after the input request reads the operation, it never asks for the action again.
    const answered = resultOf(await bea.call('execute_capability', { capability_id: mail.wireMoney, input: { amount: 33, reference: 'MRTR-1' }, space_id: mail.general, wait_seconds: 10 }));
    expect(opened).toEqual([`${mail.org.url}/inbox/decisions/${answered.decision_id}`]);
    expect(['running', 'succeeded']).toContain(answered.status);
    await expect.poll(async () => resultOf(await bea.call('get_operation', { operation_id: answered.operation_id })).status, { timeout: 15_000 }).toBe('succeeded');
    expect(mail.bank.calls.map((call) => JSON.parse(call.body).input).filter((input) => input.reference === 'MRTR-1')).toHaveLength(1);
  });

  it('gives a 2026-07-28 client without URL elicitation the page URL in the paused operation', async () => {
    const bea = await open(BEA, { name: 'Bea modern plain client', protocol: MODERN, urlElicitation: false });
    const started = resultOf(await bea.call('execute_capability', { capability_id: mail.wireMoney, input: { amount: 34 }, space_id: mail.general, wait_seconds: 10 }));
    expect(started).toMatchObject({ status: 'paused', decision_url: `${mail.org.url}/inbox/decisions/${started.decision_id}` });
  });

  it('with decide_in_browser, resolve_decision hands a high-risk decision to the browser whatever the scopes, and it stays pending until the person decides there', async () => {
    await mail.org.service.database.rows(sql`UPDATE organization SET decide_in_browser = '["high","critical"]'::jsonb RETURNING id`);
    const bea = await open(BEA, { name: 'Bea wire client', protocol: '2025-11-25', urlElicitation: false });
    const paused = resultOf(await bea.call('execute_capability', { capability_id: mail.wireMoney, input: { amount: 900 }, space_id: mail.general, wait_seconds: 10 }));
    const url = `${mail.org.url}/inbox/decisions/${paused.decision_id}`;

    // An owner's client without URL elicitation: a refusal naming the page.
    const owner = await open(OWNER, { name: 'Owner desk client', protocol: '2025-06-18', urlElicitation: false });
    const refused = await owner.call('resolve_decision', { decision_id: paused.decision_id, outcome: 'approve', idempotency_key: 'resolve-1' });
    expect(refused.isError).toBe(true);
    const { error } = JSON.parse((refused.content[0] as { text: string }).text);
    expect(error).toMatchObject({ code: 'decide_in_browser', details: { decision_id: paused.decision_id, decision_url: url } });
    expect(error.message).toContain(url);
    // Denying is deciding too.
    const denied = await owner.call('resolve_decision', { decision_id: paused.decision_id, outcome: 'deny' });
    expect(JSON.parse((denied.content[0] as { text: string }).text).error.code).toBe('decide_in_browser');

    // An owner's client taking URL elicitation: the URL request for the same page.
    const ownerNew = await open(OWNER, { name: 'Owner new client', protocol: '2025-11-25', urlElicitation: true });
    const request = await urlRequestOf(ownerNew.call('resolve_decision', { decision_id: paused.decision_id, outcome: 'approve' }));
    expect(request.elicitations).toEqual([expect.objectContaining({ mode: 'url', elicitationId: paused.decision_id, url })]);

    expect(await decisionStatus(paused.decision_id)).toBe('pending');
    await approveInBrowser(url, OWNER);
    const done = resultOf(await bea.call('get_operation', { operation_id: paused.operation_id }));
    expect(['running', 'succeeded']).toContain(done.status);
    expect(await decisionStatus(paused.decision_id)).toBe('approved');
  });

  it('hands a 2026-07-28 client resolve_decision to the browser as an input request; its retry says how the person decided', async () => {
    await mail.org.service.database.rows(sql`UPDATE organization SET decide_in_browser = '["high"]'::jsonb RETURNING id`);
    const bea = await open(BEA, { name: 'Bea wire client 3', protocol: '2025-06-18', urlElicitation: false });
    const paused = resultOf(await bea.call('execute_capability', { capability_id: mail.wireMoney, input: { amount: 77 }, space_id: mail.general, wait_seconds: 10 }));
    const { client: owner, opened } = await openApproving(OWNER, 'Owner modern client', async () => expect(await decisionStatus(paused.decision_id)).toBe('pending'));
    const answer = await owner.call('resolve_decision', { decision_id: paused.decision_id, outcome: 'approve' });
    expect(opened).toEqual([paused.decision_url]);
    // The person approved on the page, not the client: its retry is told the decision is already approved.
    expect(answer.isError).toBe(true);
    expect(JSON.parse((answer.content[0] as { text: string }).text).error).toMatchObject({ code: 'invalid_state', details: { status: 'approved' } });
    const [resolvedBy] = await mail.org.service.database.rows<{ resolved_via: string }>(sql`SELECT resolved_via FROM decisions WHERE id = ${paused.decision_id}`);
    expect(resolvedBy.resolved_via).toBe('inbox');
  });

  it('lets resolve_decision resolve tiers the setting leaves out', async () => {
    await mail.org.service.database.rows(sql`UPDATE organization SET decide_in_browser = '["critical"]'::jsonb RETURNING id`);
    const bea = await open(BEA, { name: 'Bea wire client 2', protocol: '2025-11-25', urlElicitation: true });
    const request = await urlRequestOf(bea.call('execute_capability', { capability_id: mail.wireMoney, input: { amount: 1 }, space_id: mail.general, wait_seconds: 10 }));
    const decisionId = request.elicitations[0].elicitationId;
    const owner = await open(OWNER, { name: 'Owner client 3', protocol: '2025-11-25', urlElicitation: true });
    const resolved = resultOf(await owner.call('resolve_decision', { decision_id: decisionId, outcome: 'deny', note: 'not today' }));
    expect(resolved.decision.status).toBe('denied');
  });
});
