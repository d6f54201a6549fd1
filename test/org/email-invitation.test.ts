/**
 * Invitations by email (issue 20 items 1 and 3): with SMTP_URL set, the one-time link an owner makes on /people is
 * also emailed to the invited address, from the job queue, through a real SMTP server the test started. The link in
 * the email is the one the page showed, and it works: the invited person sets their password and is signed in.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { startMailOrg, type MailOrg } from '../helpers/mail-org.js';
import { OWNER } from '../helpers/org.js';
import { Browserless } from '../helpers/web-client.js';

describe.each(engines)('invitations by email on %s', (engine) => {
  let mail: MailOrg;
  let owner: Browserless;
  beforeAll(async () => {
    mail = await startMailOrg(engine);
    owner = new Browserless(mail.org.url);
    expect((await owner.signIn(OWNER.email, OWNER.password)).status).toBe(303);
  });
  afterAll(async () => {
    await mail?.close();
  });

  async function invite(email: string, name: string): Promise<{ status: number; text: string; link?: string }> {
    const people = await owner.get('/people');
    const answer = await owner.post('/people/invite', { csrf: owner.hidden(people.text, 'csrf'), email, name, role: 'member', space_ids: [mail.general] });
    return { ...answer, link: /<code id="invitation-link">([^<]+)<\/code>/.exec(answer.text)?.[1] };
  }

  it('emails the link the page showed, and the link from the email lets the person join', async () => {
    const made = await invite('ivy@example.com', 'Ivy <Invitee>');
    expect(made.status).toBe(201);
    expect(made.text).toContain('The link is on its way to them by email');
    const [email] = await mail.smtp.waitFor('ivy@example.com');
    expect(email.subject).toBe('Owner invites you to Mail Co on Atrium');
    expect(email.text).toContain('Hello Ivy <Invitee>, owner invites you to join Mail Co as member.');
    expect(email.text).toContain(`Join and choose your password: ${made.link}`);
    // The HTML part escapes what a person typed.
    expect(email.html).toContain('Hello Ivy &lt;Invitee');
    expect(email.html).not.toContain('<Invitee>');
    expect(email.html).toContain(`href="${made.link}"`);

    const link = /Join and choose your password: (\S+)/.exec(email.text)![1];
    const browser = new Browserless(mail.org.url);
    const signIn = await browser.get('/signin');
    const joined = await browser.post(new URL(link).pathname, { csrf: browser.hidden(signIn.text, 'csrf'), password: 'ivy-password-123' });
    expect(joined.status).toBe(303);
    expect((await browser.get('/people')).text).toContain('General');

    const [sent] = await mail.org.service.database.rows<{ summary: string; details: { reason: string; to: string } }>(
      sql`SELECT summary, details FROM org_activity WHERE kind = 'notification.sent' AND details->>'reason' = 'invitation' AND details->>'to' = 'ivy@example.com'`,
    );
    expect(sent).toEqual({ summary: 'emailed Ivy <Invitee> their invitation', details: { reason: 'invitation', to: 'ivy@example.com' } });
  });

  it('does not email an invitation withdrawn before its email went', async () => {
    const db = mail.org.service.database;
    // Hold the send back (its first two attempts are refused, seconds apart), withdraw, then let a retry find it withdrawn.
    mail.smtp.refuseNext(2);
    const made = await invite('wes@example.com', 'Wes Withdrawn');
    expect(made.status).toBe(201);
    await expect.poll(() => mail.smtp.refusals, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const [invitation] = await db.rows<{ id: string }>(sql`SELECT id FROM invitations WHERE email = 'wes@example.com'`);
    const people = await owner.get('/people');
    expect((await owner.post('/people/invitations/withdraw', { csrf: owner.hidden(people.text, 'csrf'), invitation_id: invitation.id })).status).toBe(303);
    await expect.poll(async () => (await db.rows(sql`SELECT 1 FROM jobs WHERE kind = 'org.invitation-send'`)).length, { timeout: 15_000 }).toBe(0);
    expect(mail.smtp.to('wes@example.com')).toEqual([]);
  });
});
