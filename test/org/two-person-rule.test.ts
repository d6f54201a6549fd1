/**
 * The two-person rule (issue 20 item 6, DESIGN 4.8), end to end through the MCP SDK client, the inbox and a real
 * browser: a rule with `approvals: 2`, or the risk tier `critical: 2`, pauses an action until two different people
 * approve it; the person it was asked for never counts; one approval keeps it paused and calls nothing; the second
 * runs it once; any deny ends it; three people approving at the same moment run it exactly once.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resolveDecision } from '../../src/org/decisions/resolve.js';
import { parseOrgFile } from '../../src/org/org-file/schema.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectOrgMcp, settleOperation, type OrgMcp } from '../helpers/org-mcp.js';
import { checkPage, launchChromium, pageChecksTimeout } from '../helpers/page-check.js';
import { Browserless } from '../helpers/web-client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const PASSWORD = 'two-person-password-1';
const ADMINS = [
  { email: 'ada@example.com', name: 'Ada' },
  { email: 'bo@example.com', name: 'Bo' },
  { email: 'cy@example.com', name: 'Cy' },
];
const TWO_PERSON_MESSAGE =
  "this action was asked for on your behalf and needs 2 other people's approval (the two-person rule): you may deny it, not approve it";

describe.each(engines)('the two-person rule on %s', (engine) => {
  let org: TestOrg;
  let receiver: WebhookReceiver;
  /** The owner's client that asks for the actions. */
  let actor: OrgMcp;
  /** The owner again, through another client: the person the actions were asked for. */
  let requester: OrgMcp;
  /** Ada's, Bo's and Cy's clients: admins, so each may decide. */
  let deciders: OrgMcp[];
  let spaceId: string;
  const capability: Record<string, string> = {};

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    process.env.TWO_PERSON_HOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
    process.env.TWO_PERSON_PASSWORD = PASSWORD;
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-two-person-')), 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Two Co, client_autonomy: 2, approvals: { critical: 2 } }
people:
${ADMINS.map((admin) => `  - { email: ${admin.email}, name: ${admin.name}, role: admin, password_env: TWO_PERSON_PASSWORD }`).join('\n')}
spaces: [{ key: general, name: General, members: [${OWNER.email}, ${ADMINS.map((admin) => admin.email).join(', ')}] }]
capabilities:
  - key: wire_money
    name: Wire money
    risk: low              # runs unasked at autonomy 2: only the rule pauses it
    connector: { kind: webhook, url: ${receiver.url}/wire, secret_env: TWO_PERSON_HOOK_SECRET }
  - key: launch_rocket
    name: Launch the rocket
    risk: critical
    connector: { kind: webhook, url: ${receiver.url}/launch, secret_env: TWO_PERSON_HOOK_SECRET }
rules:
  - { name: Two for wires, when: { capability: wire_money }, then: require_approval, approvals: 2 }
`,
    );
    org = await startOrg(engine, { config: { orgFile } });
    actor = await connectOrgMcp(org, { scopes: ['integrations:read', 'integrations:act'], clientName: 'Acting client' });
    requester = await connectOrgMcp(org, { scopes: ['governance:admin'], clientName: 'Owner desk' });
    deciders = [];
    for (const admin of ADMINS) {
      deciders.push(await connectOrgMcp(org, { scopes: ['governance:admin'], email: admin.email, password: PASSWORD, clientName: `${admin.name} desk` }));
    }
    spaceId = (await actor.callOk('service_context')).spaces[0].id;
    for (const item of (await actor.callOk('list_capabilities')).capabilities) capability[item.key] = item.id;
  });
  afterAll(async () => {
    for (const client of [actor, requester, ...(deciders ?? [])]) await client?.close();
    await org?.close();
    await receiver?.close();
  });
  beforeEach(() => {
    receiver.calls.length = 0;
  });

  const [ada, bo, cy] = [0, 1, 2].map((index) => ({
    resolve: (decisionId: string, outcome: 'approve' | 'deny', extra: Record<string, unknown> = {}) =>
      deciders[index].callOk('resolve_decision', { decision_id: decisionId, outcome, ...extra }),
    refused: (decisionId: string, outcome: 'approve' | 'deny', extra: Record<string, unknown> = {}) =>
      deciders[index].callError('resolve_decision', { decision_id: decisionId, outcome, ...extra }),
    clientId: () => deciders[index].connected.clientId,
  }));

  async function pause(key: string, input: Record<string, unknown>) {
    const paused = await actor.callOk('execute_capability', { capability_id: capability[key], input, space_id: spaceId, wait_seconds: 10 });
    expect(paused).toMatchObject({ status: 'paused', decision_id: expect.any(String) });
    return paused as { operation_id: string; decision_id: string };
  }

  async function signedIn(email: string, password: string): Promise<Browserless> {
    const browser = new Browserless(org.url);
    expect((await browser.signIn(email, password)).status).toBe(303);
    return browser;
  }

  const approvalRows = (decisionId: string) =>
    org.service.database.rows<{ person: string; via: string }>(
      sql`SELECT p.name AS person, a.via FROM decision_approvals a JOIN people p ON p.id = a.person_id WHERE a.decision_id = ${decisionId} ORDER BY a.created_at, p.name`,
    );

  it('a rule with approvals: 2 pauses; the requester cannot approve; one approval keeps it paused; the second runs it once', async () => {
    const paused = await pause('wire_money', { amount: 100 });
    const [listed] = (await deciders[1].callOk('list_decisions')).decisions.filter((item: any) => item.id === paused.decision_id);
    expect(listed).toMatchObject({ status: 'pending', approvals_required: 2, approvals: [], reasons: ['rule "Two for wires" says require_approval'] });

    // The person it was asked for: refused through a client and in the inbox, with the rule named.
    expect(await requester.callError('resolve_decision', { decision_id: paused.decision_id, outcome: 'approve' })).toEqual({
      code: 'forbidden',
      message: TWO_PERSON_MESSAGE,
    });
    const owner = await signedIn(OWNER.email, OWNER.password);
    const ownerInbox = await owner.get('/inbox');
    expect(ownerInbox.text).toContain('0 of 2 approvals');
    expect(ownerInbox.text).toContain('This action was asked for on your behalf, so other people must approve it; you may deny it.');
    expect(ownerInbox.text).not.toContain('value="approve"');
    const ownerTry = await owner.post('/inbox/resolve', { csrf: owner.hidden(ownerInbox.text, 'csrf'), decision_id: paused.decision_id, outcome: 'approve' });
    expect(ownerTry.status).toBe(403);
    expect(ownerTry.text).toContain('the two-person rule');

    // Ada approves in the inbox: the decision waits for another person and nothing is called.
    const adaBrowser = await signedIn(ADMINS[0].email, PASSWORD);
    const adaInbox = await adaBrowser.get('/inbox');
    expect(adaInbox.text).toContain('0 of 2 approvals');
    expect(adaInbox.text).not.toContain('Remember: let');
    const first = await adaBrowser.post('/inbox/resolve', { csrf: adaBrowser.hidden(adaInbox.text, 'csrf'), decision_id: paused.decision_id, outcome: 'approve', note: 'looks right' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe(`/inbox/decisions/${paused.decision_id}`);
    const outcome = await adaBrowser.get(`/inbox/decisions/${paused.decision_id}`);
    expect(outcome.text).toContain('Wire money: pending');
    expect(outcome.text).toContain('1 of 2 approvals: Ada (inbox)');
    expect(outcome.text).toContain("You approved this: it waits for another person's approval.");
    const inboxAfter = await adaBrowser.get('/inbox');
    expect(inboxAfter.text).toContain('1 of 2 approvals: Ada (inbox)');
    expect(inboxAfter.text).toContain("You approved this: it waits for another person's approval.");
    expect(await settleOperation(actor, paused.operation_id)).toMatchObject({ status: 'paused', decision_id: paused.decision_id });
    expect(receiver.calls).toEqual([]);

    // The same person again, through a client this time: not counted twice.
    expect(await ada.refused(paused.decision_id, 'approve')).toEqual({
      code: 'invalid_state',
      message: "you already approved this decision: it waits for another person's approval",
      details: { status: 'pending' },
    });

    // Bo's approval is the second: the decision is approved and the action runs, once.
    const second = await bo.resolve(paused.decision_id, 'approve');
    expect(second.decision).toMatchObject({
      status: 'approved',
      approvals_required: 2,
      approvals: [
        { person_id: expect.any(String), name: 'Ada', via: 'inbox', at: expect.any(String), note: 'looks right' },
        { person_id: expect.any(String), name: 'Bo', via: 'client', client: { id: bo.clientId(), name: 'Bo desk' }, at: expect.any(String) },
      ],
      resolved_by: { name: 'Bo', via: 'client' },
    });
    expect(await settleOperation(actor, paused.operation_id)).toMatchObject({ status: 'succeeded', result: { status: 200 } });
    expect(receiver.calls.map((call) => call.path)).toEqual(['/wire']);
    expect(receiver.calls[0].headers['webhook-id']).toBe(paused.operation_id);
    expect(await approvalRows(paused.decision_id)).toEqual([
      { person: 'Ada', via: 'inbox' },
      { person: 'Bo', via: bo.clientId() },
    ]);

    // The log: each approval with its person and channel, then the resolution once, then Bo's call that resolved it.
    const entries = await org.service.database.rows<{ kind: string; summary: string; person: string | null }>(
      sql`SELECT a.kind, a.summary, p.name AS person FROM org_activity a LEFT JOIN people p ON p.id = a.person_id
        WHERE a.subject = ${paused.decision_id} ORDER BY a.seq`,
    );
    expect(entries.map(({ kind, person }) => [kind, person])).toEqual([
      ['decision.opened', 'Owner'],
      ['decision.approved_once', 'Ada'],
      ['decision.approved_once', 'Bo'],
      ['decision.resolved', 'Bo'],
      ['tool.called', 'Bo'],
    ]);
    expect(entries[1].summary).toBe('approval 1 of 2 in the inbox: looks right');
    expect(entries[2].summary).toBe('approval 2 of 2 through a client');
    expect((await adaBrowser.get('/inbox')).text).toContain(
      `Bo, through the client Bo desk (client id ${bo.clientId()}); 2 of 2 approvals: Ada (inbox), Bo (through Bo desk)`,
    );
    expect(await cy.refused(paused.decision_id, 'approve')).toMatchObject({ code: 'invalid_state', message: 'the decision is already approved, so it cannot be resolved again' });
  });

  it('a deny after one approval ends it at once, even by the person it was asked for; nothing is called', async () => {
    const paused = await pause('wire_money', { amount: 200 });
    expect(await ada.refused(paused.decision_id, 'approve', { remember: {} })).toMatchObject({
      code: 'invalid_request',
      message: "remember is not offered on a decision that needs 2 people's approval: it would let one person waive that rule for later actions",
    });
    expect((await ada.resolve(paused.decision_id, 'approve')).decision).toMatchObject({ status: 'pending', approvals: [{ name: 'Ada' }] });
    const denied = await requester.callOk('resolve_decision', { decision_id: paused.decision_id, outcome: 'deny', note: 'not this one' });
    expect(denied.decision).toMatchObject({ status: 'denied', note: 'not this one', resolved_by: { name: 'Owner' }, approvals: [{ name: 'Ada' }] });
    expect(denied.operation).toMatchObject({ status: 'failed', error: { code: 'denied' } });
    expect(await settleOperation(actor, paused.operation_id)).toMatchObject({ status: 'failed', error: { code: 'denied' } });
    expect(await bo.refused(paused.decision_id, 'approve')).toMatchObject({ code: 'invalid_state', message: 'the decision is already denied, so it cannot be resolved again' });
    expect(receiver.calls).toEqual([]);
  });

  it('the risk tier critical: 2 asks two people without any rule', async () => {
    const paused = await pause('launch_rocket', { countdown: 10 });
    const first = await ada.resolve(paused.decision_id, 'approve');
    expect(first.decision).toMatchObject({ status: 'pending', approvals_required: 2, risk: 'critical', approvals: [{ name: 'Ada', via: 'client' }] });
    expect(first.decision.reasons).toEqual([expect.stringMatching(/autonomy 2 .*critical/)]);
    expect(first.operation).toMatchObject({ status: 'paused' });
    expect(receiver.calls).toEqual([]);
    expect((await cy.resolve(paused.decision_id, 'approve')).decision).toMatchObject({ status: 'approved', resolved_by: { name: 'Cy' } });
    expect(await settleOperation(actor, paused.operation_id)).toMatchObject({ status: 'succeeded' });
    expect(receiver.calls.map((call) => call.path)).toEqual(['/launch']);
  });

  /** One round: a fresh paused wire, three approvals at the same moment; each answer's decision status or error code. */
  async function approveAtOnce(round: number, approveAll: (decisionId: string) => Promise<string[]>) {
    receiver.calls.length = 0;
    const paused = await pause('wire_money', { amount: 1000 + round });
    const outcomes = await approveAll(paused.decision_id);
    expect(outcomes.sort(), `round ${round}`).toEqual(['approved', 'invalid_state', 'pending']);
    expect(await settleOperation(actor, paused.operation_id)).toMatchObject({ status: 'succeeded' });
    expect(receiver.calls.map((call) => call.headers['webhook-id']), `round ${round}`).toEqual([paused.operation_id]);
    expect(await approvalRows(paused.decision_id)).toHaveLength(2);
    const [decision] = await org.service.database.rows<{ status: string }>(sql`SELECT status FROM decisions WHERE id = ${paused.decision_id}`);
    expect(decision.status).toBe('approved');
  }

  it('three people approving at the same moment through their clients approve it exactly once and run the action once', async () => {
    for (let round = 1; round <= 4; round += 1) {
      await approveAtOnce(round, async (decisionId) => {
        const answers = await Promise.all(
          deciders.map((client) => client.client.callTool({ name: 'resolve_decision', arguments: { decision_id: decisionId, outcome: 'approve' } })),
        );
        return answers.map((answer: any) => {
          const body = JSON.parse(answer.content[0].text);
          return answer.isError ? body.error.code : body.decision.status;
        });
      });
    }
  });

  it('three people approving at the same moment in the inbox (the domain function, each in its transaction) do the same', async () => {
    const people = await org.service.database.rows<{ id: string; role: string }>(
      sql`SELECT id, role FROM people WHERE email IN (${sql.join(ADMINS.map((admin) => sql`${admin.email}`), sql`, `)})`,
    );
    const { ctx } = org.service;
    for (let round = 5; round <= 12; round += 1) {
      await approveAtOnce(round, (decisionId) =>
        Promise.all(
          people.map((person) =>
            ctx.db
              .transaction((tx) => resolveDecision(tx, { decisionId, outcome: 'approve' }, { person, clientId: null }))
              .then((answer) => answer.decision.status as string, (error: { code?: string }) => error.code ?? String(error)),
          ),
        ),
      );
    }
  });

  it('the decision page with one approval of two passes the browser check', async () => {
    const paused = await pause('wire_money', { amount: 300 });
    await ada.resolve(paused.decision_id, 'approve', { note: 'fine by me' });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${org.url}/signin`);
      await page.getByLabel('Email').fill(ADMINS[0].email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname !== '/signin');
      const suffix = engine === 'pglite' ? '' : `-${engine}`;
      await checkPage(page, `${org.url}/inbox/decisions/${paused.decision_id}`, `two-person-decision${suffix}`);
      await expect(page.getByText('1 of 2 approvals: Ada (through Ada desk)').count()).resolves.toBe(1);
      await checkPage(page, `${org.url}/inbox`, `two-person-inbox${suffix}`);
      const card = page.getByRole('region', { name: 'Decision Wire money' }).filter({ hasText: '"amount": 300' });
      await expect(card.getByRole('button', { name: 'Approve' }).count()).resolves.toBe(0);
      await expect(card.getByRole('button', { name: 'Deny' }).count()).resolves.toBe(1);
    } finally {
      await browser.close();
    }
    await bo.resolve(paused.decision_id, 'deny');
    expect(receiver.calls).toEqual([]);
  }, pageChecksTimeout(2));
});

describe('approvals in the organization file', () => {
  const file = (rule: string) => `rules:\n  - ${rule}\n`;

  it('takes approvals 2–10 on a require_approval rule and on a risk tier', () => {
    expect(parseOrgFile(file('{ name: Two, when: { risk: high }, then: require_approval, approvals: 2 }')).rules[0].approvals).toBe(2);
    expect(parseOrgFile('organization: { name: X, approvals: { critical: 3 } }').organization?.approvals).toEqual({ critical: 3 });
    expect(parseOrgFile('organization: { name: X }').organization?.approvals).toEqual({});
  });

  it.each([
    ['approvals on an allow rule', file('{ name: A, when: {}, then: allow, approvals: 2 }'), 'rules.0.approvals: approvals goes with then: require_approval only'],
    ['one approval', file('{ name: A, when: {}, then: require_approval, approvals: 1 }'), 'rules.0.approvals: Too small: expected number to be >=2'],
    ['eleven approvals', 'organization: { name: X, approvals: { high: 11 } }', 'organization.approvals.high: Too big: expected number to be <=10'],
    ['a tier that is not a risk', 'organization: { name: X, approvals: { severe: 2 } }', 'organization.approvals: Unrecognized key: "severe"'],
  ])('refuses %s', (_name, text, problem) => {
    expect(() => parseOrgFile(text)).toThrow(problem);
  });
});
