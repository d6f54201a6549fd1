/**
 * Every page of the org service, and the authorization server's error page it hosts, through the browser
 * check (page-check.ts): axe-core finds nothing serious or critical and nothing scrolls sideways, at a
 * desktop's width and a phone's, with screenshots kept in test-artifacts/screenshots. The pages hold what
 * they show in use: a pending decision and a task question in the inbox, a resolved one, a learned rule, a
 * connected client and a consent request; the activity log holds what all that did.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { defineOperationKind } from '../../src/org/operations/kinds.js';
import { askTaskQuestion, startTask } from '../../src/org/tasks/agent.js';
import { taskOperationInput } from '../../src/org/tasks/records.js';
import { registerClient, startAuthorization } from '../helpers/oauth-flow.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { checkPage, launchChromium, PAGE_CHECK_ENGINE, type PageTarget, pageChecksTimeout } from '../helpers/page-check.js';
import { signInAs } from '../helpers/sdk-oauth.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

describe.each([PAGE_CHECK_ENGINE])('every page passes the browser check on %s', (engine) => {
  let org: TestOrg;
  let receiver: WebhookReceiver;
  let actor: OrgMcp;
  let governor: OrgMcp;
  let browser: Browser;
  let signedIn: BrowserContext;
  let signedOut: BrowserContext;
  let consentPath: string;
  let resolvedDecision: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-pages-')), 'org.yaml');
    await writeFile(
      orgFile,
      `organization: { name: Page Co, client_autonomy: 2 }
spaces: [{ key: general, name: General, members: [${OWNER.email}] }]
agents:
  - { key: scribe, name: Scribe, autonomy: 2, responsible: ${OWNER.email}, delivery: { kind: webhook, url: "${receiver.url}/agent" } }
capabilities:
  - key: wire_money
    name: Wire money
    risk: high
    connector: { kind: webhook, url: ${receiver.url}/wire }
    input_schema: { type: object, required: [amount], properties: { amount: { type: number }, to: { type: string } } }
`,
    );
    // The agent's side stands still: its task stays running, with the question it asked.
    const task = defineOperationKind({ kind: 'task', input: taskOperationInput, run: async () => ({ status: 'running' as const }) });
    org = await startOrg(engine, { config: { orgFile }, operationKinds: [task] });
    actor = await connectOrgMcp(org, { scopes: ['integrations:read', 'integrations:act', 'task:write'], clientName: 'Acting client' });
    governor = await connectOrgMcp(org, { scopes: ['governance:admin', 'service:ask'], clientName: 'Governing client' });

    const context = await actor.callOk('service_context');
    const spaceId = context.spaces[0].id;
    const [wire] = (await actor.callOk('list_capabilities')).capabilities;
    const execute = (input: Record<string, unknown>) => actor.callOk('execute_capability', { capability_id: wire.id, input, space_id: spaceId, wait_seconds: 10 });
    // One approved and remembered (a learned rule, an outcome page), one denied, one left waiting.
    const approved = await execute({ amount: 120, to: 'Supplier with a rather long name that must wrap on a phone' });
    await governor.callOk('resolve_decision', { decision_id: approved.decision_id, outcome: 'approve', remember: { same_input: true } });
    resolvedDecision = approved.decision_id;
    const denied = await execute({ amount: 5000, to: 'moon' });
    await governor.callOk('resolve_decision', { decision_id: denied.decision_id, outcome: 'deny', note: 'not this month' });
    await execute({ amount: 250, to: 'Landlord' });

    const scribe = context.agents.find((agent: { key: string }) => agent.key === 'scribe').id;
    const created = await actor.callOk('create_task', { space_id: spaceId, title: 'Plan the offsite', assignee_agent_id: scribe });
    await startTask(org.service.ctx.db, created.id);
    await askTaskQuestion(org.service.ctx.db, created.id, { text: 'Which city, and for how many people?', askedBy: scribe });

    consentPath = (await startAuthorization(org, await registerClient(org, 'Consent Test App'), ['memory:read', 'task:write', 'integrations:act', 'governance:admin']))
      .consentPath;

    browser = await launchChromium();
    signedOut = await browser.newContext();
    signedIn = await browser.newContext();
    const page = await signedIn.newPage();
    await page.goto(`${org.url}/signin`);
    await signInAs(page, OWNER.email, OWNER.password);
    await page.waitForURL(`${org.url}/`);
    await page.close();
  });
  afterAll(async () => {
    await browser?.close();
    await actor?.close();
    await governor?.close();
    await org?.close();
    await receiver?.close();
  });

  /** The sign-in form posted with a CSRF token that is not this browser's. */
  const formExpired: PageTarget = async (page) => {
    await page.goto(`${org.url}/signin`);
    await page.locator('input[name="csrf"]').evaluate((input: HTMLInputElement) => (input.value = 'forged'));
    await signInAs(page, OWNER.email, OWNER.password);
    await page.getByRole('heading', { name: 'This form has expired' }).waitFor();
  };

  const pages: Array<[name: string, who: 'signed-in' | 'signed-out', target: () => PageTarget]> = [
    ['welcome', 'signed-out', () => `${org.url}/`],
    ['signin', 'signed-out', () => `${org.url}/signin`],
    ['form-expired', 'signed-out', () => formExpired],
    ['docs', 'signed-out', () => `${org.url}/docs`],
    ['authorization-error', 'signed-out', () => `${org.url}/oauth/authorize?response_type=code&client_id=atr_cl_unknown`],
    ['home', 'signed-in', () => `${org.url}/`],
    ['consent', 'signed-in', () => `${org.url}${consentPath}`],
    ['inbox', 'signed-in', () => `${org.url}/inbox`],
    ['decision', 'signed-in', () => `${org.url}/inbox/decisions/${resolvedDecision}`],
    ['rules', 'signed-in', () => `${org.url}/rules`],
    ['connections', 'signed-in', () => `${org.url}/connections`],
    ['account', 'signed-in', () => `${org.url}/account`],
    ['connect', 'signed-in', () => `${org.url}/connect`],
    ['activity', 'signed-in', () => `${org.url}/activity`],
    ['activity-decisions', 'signed-in', () => `${org.url}/activity?kind=decision`],
  ];

  it.each(pages)('%s (%s)', { timeout: pageChecksTimeout(1) }, async (name, who, target) => {
    const page = await (who === 'signed-in' ? signedIn : signedOut).newPage();
    try {
      await checkPage(page, target(), `${name}-${engine}`);
    } finally {
      await page.close();
    }
  });
});
