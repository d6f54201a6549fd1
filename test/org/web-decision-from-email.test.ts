/**
 * The decision page on a phone (issue 20 item 5): the link in the email, opened signed out in Chromium at 390 px,
 * asks the person to sign in and brings them back to that decision; the page shows the capability, agent, risk,
 * reasons and arguments with Approve and Deny, fits the phone's width, and approving runs the action.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { upsertPerson } from '../../src/org/people/records.js';
import { BEA, CY, startMailOrg, type MailOrg } from '../helpers/mail-org.js';
import { checkPage, launchChromium, pageChecksTimeout } from '../helpers/page-check.js';
import { Browserless } from '../helpers/web-client.js';

/** An argument with no place to break a line: it must wrap, not push the page sideways. */
const REFERENCE = `INV-${'0123456789'.repeat(8)}`;

describe.each(engines)('the decision page an email links to, on %s', (engine) => {
  let mail: MailOrg;
  let browser: Browser;

  beforeAll(async () => {
    mail = await startMailOrg(engine);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await mail?.close();
  });

  it('signs the person in first, brings them back to the decision, and approving there runs the action', async () => {
    const client = await mail.connect(BEA, 'Bea phone');
    const { decisionId, operationId } = await mail.pauseWire(client, { amount: 250, reference: REFERENCE });
    const [email] = await mail.smtp.waitFor(BEA.email);
    const link = /^Approve or deny: (\S+)$/m.exec(email.text)?.[1];
    expect(link).toBe(`${mail.org.url}/inbox/decisions/${decisionId}`);

    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(link!);
    expect(page.url()).toBe(`${mail.org.url}/signin?return_to=${encodeURIComponent(`/inbox/decisions/${decisionId}`)}`);
    await page.getByLabel('Email').fill(BEA.email);
    await page.getByLabel('Password').fill(BEA.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(link!);

    await checkPage(page, link!, 'decision-from-email');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Wire money: pending');
    const facts = await page.locator('dl.facts').evaluate((list) =>
      Object.fromEntries([...list.querySelectorAll('dt')].map((term) => [term.textContent, term.nextElementSibling?.textContent?.trim()])),
    );
    expect(facts).toMatchObject({
      Capability: 'wire_money',
      Agent: 'Bea phone (connected application)',
      Risk: 'high',
      'Why it paused': "an agent with autonomy 2 needs a person's approval for a high-risk capability",
      Arguments: JSON.stringify({ amount: 250, reference: REFERENCE }, null, 2),
      Outcome: 'paused',
    });

    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(link!);
    // The page refreshes itself while the action runs.
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Wire money: approved');
    await expect.poll(() => page.locator('dl.facts [role=status]').textContent(), { timeout: 15_000 }).toBe('succeeded');
    expect(mail.bank.calls.map((call) => JSON.parse(call.body)).map((body) => [body.operation_id, body.input])).toEqual([[operationId, { amount: 250, reference: REFERENCE }]]);
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await checkPage(page, link!, 'decision-approved');
  }, pageChecksTimeout(2));

  it("sends a member who may see the decision but not decide it to its operation's page; anyone else finds nothing", async () => {
    const client = await mail.connect(BEA, 'Bea laptop');
    const { decisionId, operationId } = await mail.pauseWire(client, { amount: 40 });
    // Cy is in the decision's space but does not govern Bea's client: the activity log links her here.
    const cy = new Browserless(mail.org.url);
    await cy.signIn(CY.email, CY.password);
    const sent = await cy.get(`/inbox/decisions/${decisionId}`);
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`/operations/${operationId}#decision`);
    const operation = await cy.get(`/operations/${operationId}`);
    expect(operation.text).toContain('<h2 id="decision">Decision</h2>');
    expect(operation.text).not.toContain('Approve');

    await upsertPerson(mail.org.service.ctx.db, { email: 'eve@example.com', name: 'Eve Elsewhere', role: 'member', password: 'eve-password-123' });
    const eve = new Browserless(mail.org.url);
    await eve.signIn('eve@example.com', 'eve-password-123');
    const hidden = await eve.get(`/inbox/decisions/${decisionId}`);
    expect(hidden.status).toBe(404);
    expect(hidden.text).toContain('Decision not found');
    expect(hidden.text).not.toContain(operationId);
    await client.close();
  });
});
