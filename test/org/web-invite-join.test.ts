/**
 * Inviting a person by a one-time link (issue 20 item 1, DESIGN 4.6): the owner invites on /people and sees the link
 * once; the invited person opens it in a real browser, sets their password, is signed in and finds their spaces.
 * The link works once; a used, withdrawn or expired link is 410 Gone, a made-up one 404; an email that is already
 * a member is refused; only the token's SHA-256 is stored.
 */
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { startManageOrg, csrfOf, type ManageOrg } from '../helpers/people-org.js';
import { OWNER } from '../helpers/org.js';
import { checkPage, launchChromium, pageChecksTimeout } from '../helpers/page-check.js';

describe.each(engines)('invitations on %s', (engine) => {
  let m: ManageOrg;
  let browser: Browser;
  beforeAll(async () => {
    m = await startManageOrg(engine);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await m?.close();
  });

  it('shows the link once, and the invited person joins in a browser, signed in and in their spaces', async () => {
    const made = await m.invite(m.owner, { email: 'Nia@Example.com', name: 'Nia Newcomer', role: 'member', spaceIds: [m.spaces.ops] });
    expect(made.status).toBe(201);
    expect(made.text).toContain('Nia Newcomer (nia@example.com) is invited as member');
    expect(made.link).toMatch(new RegExp(`^${m.org.url}/join/inv_[A-Za-z0-9_-]{43}$`));
    const token = made.link!.split('/join/')[1];
    const db = m.org.service.database;
    const [stored] = await db.rows<{ token_hash: string; expires_in_days: number }>(
      sql`SELECT token_hash, round(extract(epoch FROM expires_at - created_at) / 86400)::int AS expires_in_days FROM invitations WHERE email = 'nia@example.com'`,
    );
    expect(stored).toEqual({ token_hash: createHash('sha256').update(token).digest('base64url'), expires_in_days: 7 });
    // The link is nowhere else: not on /people, which lists the invitation as waiting.
    const people = await m.owner.get('/people');
    expect(people.text).not.toContain(token);
    expect(people.text).toContain('Withdraw the invitation of nia@example.com');

    const context = await browser.newContext();
    const page = await context.newPage();
    await checkPage(page, made.link!, `join-${engine}`);
    await page.goto(made.link!);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Join Manage Co');
    expect(await page.content()).toContain('nia@example.com');
    await page.getByLabel('Password (at least 8 characters)').fill('nia-password-1');
    await page.getByRole('button', { name: 'Join Manage Co' }).click();
    await page.waitForURL(`${m.org.url}/`);
    await page.goto(`${m.org.url}/people`);
    expect(await page.locator('table').first().textContent()).toContain('Operations');
    expect(await page.content()).not.toContain('>General</a>');
    await context.close();

    const [joined] = await m.activity('person.joined');
    const [nia] = await db.rows<{ id: string; role: string; status: string }>(sql`SELECT id, role, status FROM people WHERE email = 'nia@example.com'`);
    expect(nia).toMatchObject({ role: 'member', status: 'active' });
    expect(joined).toMatchObject({ person_id: nia.id, summary: 'joined the organization as member' });
    const [invited] = await m.activity('person.invited');
    expect(invited).toMatchObject({ summary: 'invited Nia Newcomer (nia@example.com) as member', details: { role: 'member', space_ids: [m.spaces.ops] } });
    expect(invited.person_id).not.toBeNull();

    // Used up: the same link again is gone, and says so.
    const again = await m.join(made.link!, 'another-password-1');
    expect(again.answer.status).toBe(410);
    const reopened = await again.browser.get(new URL(made.link!).pathname);
    expect(reopened.status).toBe(410);
    expect(reopened.text).toContain('This invitation was already used.');
  }, pageChecksTimeout(1));

  it('refuses an expired, a withdrawn and a made-up link with a page saying which', async () => {
    const expired = await m.invite(m.owner, { email: 'old@example.com', name: 'Olga Late' });
    await m.org.service.database.rows(sql`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE email = 'old@example.com'`);
    const late = await m.join(expired.link!, 'olga-password-1');
    expect(late.answer.status).toBe(410);
    expect(late.answer.text).toContain('This invitation has expired.');

    const withdrawn = await m.invite(m.owner, { email: 'wes@example.com', name: 'Wes Withdrawn' });
    const page = await m.owner.get('/people');
    const id = /name="invitation_id" value="([^"]+)"/.exec(page.text.slice(page.text.indexOf('Wes Withdrawn')))![1];
    const withdraw = await m.owner.post('/people/invitations/withdraw', { csrf: await csrfOf(m.owner), invitation_id: id });
    expect(withdraw.status).toBe(303);
    expect(withdraw.headers.get('location')).toBe('/people?done=withdrawn');
    const opened = await m.join(withdrawn.link!, 'wes-password-12');
    expect(opened.answer.status).toBe(410);
    expect(opened.answer.text).toContain('This invitation was withdrawn.');
    expect((await m.activity('invitation.withdrawn')).map((entry) => entry.summary)).toContain('withdrew the invitation of wes@example.com');

    const unknown = await m.join(`${m.org.url}/join/inv_${'A'.repeat(43)}`, 'whatever-pass');
    expect(unknown.answer.status).toBe(404);
    expect(unknown.answer.text).toContain('Invitation not found');
    const rows = await m.org.service.database.rows(sql`SELECT 1 FROM people WHERE email IN ('old@example.com', 'wes@example.com')`);
    expect(rows).toEqual([]);
  });

  it('lets exactly one of two people using the same link at once join', async () => {
    const made = await m.invite(m.owner, { email: 'duo@example.com', name: 'Duo Race' });
    const answers = await Promise.all([m.join(made.link!, 'first-password-1'), m.join(made.link!, 'second-password')]);
    expect(answers.map(({ answer }) => answer.status).sort()).toEqual([303, 410]);
    const people = await m.org.service.database.rows(sql`SELECT status FROM people WHERE email = 'duo@example.com'`);
    expect(people).toEqual([{ status: 'active' }]);
  });

  it('asks for a password following the rule, keeping the link usable', async () => {
    const made = await m.invite(m.owner, { email: 'pat@example.com', name: 'Pat Short' });
    const short = await m.join(made.link!, 'short');
    expect(short.answer.status).toBe(400);
    expect(short.answer.text).toContain('The password must be at least 8 characters.');
    expect((await m.join(made.link!, 'pat-password-1')).answer.status).toBe(303);
  });

  it('refuses to invite a member again, or twice while a link waits, and bad input, writing nothing', async () => {
    const self = await m.invite(m.owner, { email: OWNER.email, name: 'Owner' });
    expect(self.status).toBe(409);
    expect(self.text).toContain(`${OWNER.email} is already a member of the organization`);
    await m.invite(m.owner, { email: 'twice@example.com', name: 'Tw Ice' });
    const twice = await m.invite(m.owner, { email: 'twice@example.com', name: 'Tw Ice' });
    expect(twice.status).toBe(409);
    expect(twice.text).toContain('an invitation for twice@example.com is already waiting: withdraw it to send a new link');
    const bad = await m.invite(m.owner, { email: 'not-an-email', name: 'Bad' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('email: must be an email address');
    const noSpace = await m.invite(m.owner, { email: 'lost@example.com', name: 'Lost', spaceIds: ['spc_nowhere'] });
    expect(noSpace.status).toBe(400);
    expect(noSpace.text).toContain('space_ids: names a space that does not exist');
    const rows = await m.org.service.database.rows<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM invitations WHERE email IN ('not-an-email', 'lost@example.com', ${OWNER.email})`,
    );
    expect(rows).toEqual([{ n: 0 }]);
  });
});
