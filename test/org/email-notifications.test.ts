/**
 * People are told by email (issue 20 items 3 and 5), through a real SMTP server the test started: a paused action
 * emails the person asked to decide it, once, however often its event is handed over; a person who turned email off
 * on /account gets none; a server that refuses at first gets the email on a retry; a task question emails the
 * members of its space; a decision still open half-way to its expiry reminds its person and tells the owners and
 * admins, and one resolved before then tells nobody.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueJob } from '../../src/platform/jobs.js';
import { decidersOf } from '../../src/org/decisions/deciders.js';
import { askTaskQuestion } from '../../src/org/tasks/agent.js';
import { engines } from '../helpers/databases.js';
import { BEA, CY, DEE, MAIL_FROM, startMailOrg, type MailOrg } from '../helpers/mail-org.js';
import { OWNER } from '../helpers/org.js';
import type { OrgMcp } from '../helpers/org-mcp.js';
import { Browserless } from '../helpers/web-client.js';

describe.each(engines)('email to people on %s', (engine) => {
  let mail: MailOrg;
  let bea: OrgMcp;

  beforeAll(async () => {
    mail = await startMailOrg(engine);
    bea = await mail.connect(BEA, 'Bea phone');
  });
  afterAll(async () => {
    await mail?.close();
  });

  const rows = <T extends Record<string, unknown>>(query: ReturnType<typeof sql>) => mail.org.service.database.rows<T>(query);

  /** Until the queue holds no announce or send job: every email the events asked for has gone or failed. */
  async function settled(): Promise<void> {
    for (let waited = 0; ; waited += 50) {
      const [{ count }] = await rows<{ count: number }>(sql`SELECT count(*)::int AS count FROM jobs WHERE kind IN ('org.announce', 'org.notification-send')`);
      if (count === 0) return;
      if (waited > 20_000) throw new Error(`${count} announce or send jobs still queued`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The lines every email ends with: how to turn them off. */
  const footer = () => ['', '--', `You get these emails because you are a person of this organization. Turn them off on your account page: ${mail.org.url}/account`, ''];

  /** A decision's expiry as the emails write it: `2026-03-04 10:30:00 UTC`. */
  async function expiry(decisionId: string): Promise<string> {
    const [row] = await rows<{ at: string }>(sql`SELECT to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC' AS at FROM decisions WHERE id = ${decisionId}`);
    return row.at;
  }

  async function signIn(person: { email: string; password: string }): Promise<Browserless> {
    const browser = new Browserless(mail.org.url);
    expect((await browser.signIn(person.email, person.password)).status).toBe(303);
    return browser;
  }

  it('emails the person asked to decide once, with a link to the decision and its facts', async () => {
    const { decisionId } = await mail.pauseWire(bea, { to: '<b>Acme</b> & Co' });
    const [email] = await mail.smtp.waitFor(BEA.email);
    const [decision] = await rows<{ reasons: string[] }>(sql`SELECT reasons FROM decisions WHERE id = ${decisionId}`);
    const expires = await expiry(decisionId);
    const link = `${mail.org.url}/inbox/decisions/${decisionId}`;
    expect(email.from).toBe(MAIL_FROM.replace('Mail Co', '"Mail Co"'));
    expect(email.to).toEqual([BEA.email]);
    expect(email.subject).toBe('Decision needed: Bea phone (connected application) asks to run Wire money (high risk)');
    expect(email.text).toBe(
      [
        'Bea phone (connected application) asks to run Wire money and waits for your decision. Until someone approves it, nothing is done.',
        '',
        'Capability: Wire money (wire_money)',
        'Agent: Bea phone (connected application)',
        'Risk: high',
        'Why it paused:',
        ...decision.reasons.map((reason) => `  - ${reason}`),
        'Arguments:',
        '  {',
        '    "to": "<b>Acme</b> & Co"',
        '  }',
        `Expires: ${expires}`,
        '',
        `Approve or deny: ${link}`,
        ...footer(),
      ].join('\n'),
    );
    // The HTML part escapes what the agent wrote and links straight to the decision.
    expect(email.html).toContain('&quot;to&quot;: &quot;&lt;b>Acme&lt;/b> &amp; Co&quot;');
    expect(email.html).not.toContain('<b>Acme</b>');
    expect(email.html).toContain(`<a href="${link}">Approve or deny</a>`);
    expect(email.messageId).toMatch(/^<ntf_[\w-]+@127\.0\.0\.1>$/);

    await settled();
    expect(mail.smtp.emails.filter((sent) => sent.subject.startsWith('Decision needed'))).toHaveLength(1);
    expect(await rows(sql`SELECT p.email, n.reason, n.status, n.attempts, n.last_error, n.sent_at IS NOT NULL AS sent FROM notifications n JOIN people p ON p.id = n.person_id WHERE n.subject = ${decisionId}`)).toEqual([
      { email: BEA.email, reason: 'decision', status: 'sent', attempts: 1, last_error: null, sent: true },
    ]);
    const [entry] = await rows<{ summary: string; details: Record<string, unknown> }>(
      sql`SELECT summary, details FROM org_activity WHERE kind = 'notification.sent' AND subject = ${decisionId}`,
    );
    expect(entry.summary).toBe(`emailed ${BEA.name}: a decision waits for them`);
    expect(Object.keys(entry.details).sort()).toEqual(['notification_id', 'reason', 'to']);
    expect(entry.details).toMatchObject({ reason: 'decision', to: BEA.email });
  });

  it('sends one email for a decision even when its event is handed to the channel again', async () => {
    const { decisionId } = await mail.pauseWire(bea, { amount: 7 });
    await mail.smtp.waitFor(BEA.email, 2);
    await settled();
    // The announce job running again after a crash: the same event, queued once more.
    const event = { event_id: 'evt_again', type: 'decision.pending', at: new Date().toISOString(), data: { decision_id: decisionId } };
    await enqueueJob(mail.org.service.ctx.db, 'org.announce', event);
    await enqueueJob(mail.org.service.ctx.db, 'org.announce', { ...event, event_id: 'evt_once_more' });
    mail.org.service.jobs.wake();
    await settled();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(mail.smtp.to(BEA.email).filter((email) => email.text.includes(decisionId))).toHaveLength(1);
    expect(await rows(sql`SELECT count(*)::int AS count FROM notifications WHERE subject = ${decisionId}`)).toEqual([{ count: 1 }]);
  });

  it('never sends a notification again once sent, nor one whose decision was resolved before it went', async () => {
    const { decisionId } = await mail.pauseWire(bea, { amount: 8 });
    await settled();
    const [sent] = await rows<{ id: string }>(sql`SELECT id FROM notifications WHERE subject = ${decisionId}`);
    const { db } = mail.org.service.ctx;
    const before = mail.smtp.emails.length;
    // A second send job for the row (a crash after the mark, say), and one for a row whose decision Bea denied first.
    await enqueueJob(db, 'org.notification-send', { notification_id: sent.id });
    const browser = await signIn(BEA);
    const inbox = await browser.get('/inbox');
    expect((await browser.post('/inbox/resolve', { csrf: browser.hidden(inbox.text, 'csrf'), decision_id: decisionId, outcome: 'deny' })).status).toBe(303);
    await db.execute(sql`INSERT INTO notifications (id, person_id, subject, reason) SELECT 'ntf_late', id, ${decisionId}, 'escalation' FROM people WHERE email = ${DEE.email}`);
    await enqueueJob(db, 'org.notification-send', { notification_id: 'ntf_late' });
    mail.org.service.jobs.wake();
    await settled();
    expect(mail.smtp.emails.length).toBe(before);
    expect(await rows(sql`SELECT id, status, attempts, last_error FROM notifications WHERE subject = ${decisionId} ORDER BY reason`)).toEqual([
      { id: sent.id, status: 'sent', attempts: 1, last_error: null },
      { id: 'ntf_late', status: 'failed', attempts: 0, last_error: 'not sent: the decision was denied first' },
    ]);
  });

  it('sends nothing to a person who turned email off on their account page', async () => {
    const browser = await signIn(CY);
    const account = await browser.get('/account');
    expect(account.text).toContain('<input type="checkbox" id="email_notifications" name="email_notifications" value="1" checked/>');
    // An unticked checkbox sends nothing.
    const saved = await browser.post('/account/notifications', { csrf: browser.hidden(account.text, 'csrf') });
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe('/account?done=notifications');
    const confirmed = await browser.get('/account?done=notifications');
    expect(confirmed.text).toContain('<p role="status">Saved: you get no more emails. Decisions and questions still wait for you in the inbox.</p>');
    expect(confirmed.text).toContain('<input type="checkbox" id="email_notifications" name="email_notifications" value="1"/>');
    expect(await rows(sql`SELECT email_notifications FROM people WHERE email = ${CY.email}`)).toEqual([{ email_notifications: false }]);
    expect(await rows(sql`SELECT count(*)::int AS count FROM org_activity WHERE kind = 'person.notifications_changed'`)).toEqual([{ count: 1 }]);

    const cy = await mail.connect(CY, 'Cy desk');
    const { decisionId } = await mail.pauseWire(cy, { amount: 12 });
    await settled();
    expect(mail.smtp.to(CY.email)).toEqual([]);
    expect(await rows(sql`SELECT count(*)::int AS count FROM notifications WHERE subject = ${decisionId}`)).toEqual([{ count: 0 }]);
  });

  it('refuses a form without its CSRF token and changes nothing', async () => {
    const browser = await signIn(BEA);
    const refused = await browser.post('/account/notifications', { csrf: 'forged' });
    expect(refused.status).toBe(403);
    expect(await rows(sql`SELECT email_notifications FROM people WHERE email = ${BEA.email}`)).toEqual([{ email_notifications: true }]);
  });

  it('tries again when the mail server refuses at first, and sends one email', async () => {
    mail.smtp.refuseNext(1);
    const before = mail.smtp.to(BEA.email).length;
    const { decisionId } = await mail.pauseWire(bea, { amount: 99 });
    await mail.smtp.waitFor(BEA.email, before + 1);
    await settled();
    expect(mail.smtp.refusals).toBe(1);
    expect(mail.smtp.to(BEA.email).filter((email) => email.text.includes(decisionId))).toHaveLength(1);
    expect(await rows(sql`SELECT status, attempts, last_error FROM notifications WHERE subject = ${decisionId}`)).toEqual([
      { status: 'sent', attempts: 2, last_error: null },
    ]);
  });

  it('asks the responsible person, or the owners and admins when there is none', async () => {
    const { decisionId } = await mail.pauseWire(bea, { amount: 1 });
    const { db } = mail.org.service.ctx;
    const emails = async () => (await decidersOf(db, decisionId)).map((person) => person.email);
    expect(await emails()).toEqual([BEA.email]);
    await db.execute(sql`UPDATE people SET status = 'removed' WHERE email = ${BEA.email}`);
    expect(await emails()).toEqual([DEE.email, OWNER.email]);
    await db.execute(sql`UPDATE people SET status = 'active' WHERE email = ${BEA.email}`);
    // Two approvals: everyone who may approve, but never the person the action was asked for (Bea's own client).
    await db.execute(sql`UPDATE decisions SET approvals_required = 2 WHERE id = ${decisionId}`);
    expect(await emails()).toEqual([DEE.email, OWNER.email]);
    expect(await decidersOf(db, 'dec_unknown')).toEqual([]);
  });

  it('emails the members of a task’s space when its agent asks a question', async () => {
    const owner = await mail.connect(OWNER, 'Owner laptop');
    const task = await owner.callOk('create_task', { space_id: mail.general, title: 'Plan the <offsite>', assignee_agent_id: mail.scribe });
    for (let waited = 0; (await owner.callOk('get_task', { task_id: task.id })).status !== 'in_progress'; waited += 50) {
      if (waited > 20_000) throw new Error('scribe never took the task');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const questionId = await askTaskQuestion(mail.org.service.ctx.db, task.id, { text: 'Lisbon or Porto?', askedBy: mail.scribe });
    const questions = (address: string) => mail.smtp.to(address).filter((sent) => sent.subject.startsWith('Question'));
    await expect.poll(() => questions(OWNER.email).length, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => questions(BEA.email).length, { timeout: 10_000 }).toBe(1);
    const [email] = questions(OWNER.email);
    expect(email.subject).toBe('Question on “Plan the <offsite>” from Scribe');
    expect(email.text).toBe(
      [
        'Scribe asks a question on the task “Plan the <offsite>” in General and waits for an answer.',
        '',
        'Task: Plan the <offsite>',
        'Question:',
        '  Lisbon or Porto?',
        '',
        `Answer it in your inbox: ${mail.org.url}/inbox`,
        `The task: ${mail.org.url}/tasks/${task.id}`,
        ...footer(),
      ].join('\n'),
    );
    expect(email.html).toContain('<dd style="margin: 0 0 0.75em 0">Plan the &lt;offsite></dd>');
    await settled();
    // Cy, a member too, turned email off above; Dee, an admin, is no member of the space.
    expect(
      await rows(sql`SELECT p.email FROM notifications n JOIN people p ON p.id = n.person_id WHERE n.subject = ${questionId} AND n.reason = 'task_question' AND n.status = 'sent' ORDER BY p.email`),
    ).toEqual([{ email: BEA.email }, { email: OWNER.email }]);
    expect(questions(DEE.email)).toEqual([]);
    expect(questions(CY.email)).toEqual([]);
  });

  it('reminds the person and tells the owners and admins half-way to the expiry, and nobody of a decision resolved before', async () => {
    const { db } = mail.org.service.ctx;
    // Short lives (the file's decision_ttl at its shortest is 1s): half-way comes in seconds, with time left to send
    // before the expiry, and to resolve `resolved` well before its half-way point.
    let waiting: string;
    let resolved: string;
    try {
      await db.execute(sql`UPDATE organization SET decision_ttl_seconds = 10`);
      ({ decisionId: resolved } = await mail.pauseWire(bea, { amount: 401 }));
      await db.execute(sql`UPDATE organization SET decision_ttl_seconds = 6`);
      ({ decisionId: waiting } = await mail.pauseWire(bea, { amount: 400 }));
    } finally {
      await db.execute(sql`UPDATE organization SET decision_ttl_seconds = 604800`);
    }
    // Bea denies `resolved` at once, in her inbox.
    const browser = await signIn(BEA);
    const inbox = await browser.get('/inbox');
    const denied = await browser.post('/inbox/resolve', { csrf: browser.hidden(inbox.text, 'csrf'), decision_id: resolved, outcome: 'deny' });
    expect(denied.status).toBe(303);

    await expect.poll(() => mail.smtp.to(BEA.email).filter((email) => email.subject.startsWith('Reminder')).length, { timeout: 10_000 }).toBe(1);
    const [reminder] = mail.smtp.to(BEA.email).filter((email) => email.subject.startsWith('Reminder'));
    expect(reminder.text).toContain(`/inbox/decisions/${waiting}`);
    const expires = await expiry(waiting);
    expect(reminder.subject).toBe('Reminder: Bea phone (connected application) still waits for your decision on Wire money');
    expect(reminder.text.split('\n')[0]).toBe(
      `Bea phone (connected application) asks to run Wire money and has waited half its time for your decision. It expires at ${expires}; the action then fails.`,
    );
    // The owner and Dee were not asked to decide it: the escalation is the one email about it they get.
    for (const person of [OWNER, DEE]) {
      await expect
        .poll(() => mail.smtp.to(person.email).filter((email) => email.text.includes(waiting)).map((email) => email.subject.split(':')[0]), { timeout: 10_000 })
        .toEqual(['Undecided for half its time']);
    }
    const [escalation] = mail.smtp.to(DEE.email).filter((email) => email.text.includes(waiting));
    expect(escalation.subject).toBe(`Undecided for half its time: Bea phone (connected application) asks to run Wire money (expires ${expires})`);
    expect(escalation.text.split('\n\n').slice(0, 2)).toEqual([
      `Bea phone (connected application) asks to run Wire money. It has waited half its time and nobody has decided: ${BEA.name} was asked. It expires at ${expires}; the action then fails.`,
      'You are told as an owner or admin of the organization: you may decide it too.',
    ]);
    await settled();
    expect(
      await rows(sql`SELECT p.email, n.reason FROM notifications n JOIN people p ON p.id = n.person_id WHERE n.subject = ${waiting} AND n.reason <> 'decision' ORDER BY p.email`),
    ).toEqual([
      { email: BEA.email, reason: 'reminder' },
      { email: DEE.email, reason: 'escalation' },
      { email: OWNER.email, reason: 'escalation' },
    ]);
    expect(await rows(sql`SELECT count(*)::int AS count FROM org_activity WHERE kind = 'decision.reminded' AND subject = ${waiting}`)).toEqual([{ count: 1 }]);

    // The resolved one's reminder ran at its half-way point, and reminded nobody.
    await expect.poll(() => rows(sql`SELECT count(*)::int AS count FROM jobs WHERE key = ${`decision-reminder:${resolved}`}`), { timeout: 10_000 }).toEqual([{ count: 0 }]);
    await settled();
    expect(await rows(sql`SELECT reminded_at FROM decisions WHERE id = ${resolved}`)).toEqual([{ reminded_at: null }]);
    expect(await rows(sql`SELECT reason FROM notifications WHERE subject = ${resolved}`)).toEqual([{ reason: 'decision' }]);
    expect(mail.smtp.emails.filter((email) => email.text.includes(resolved) && !email.subject.startsWith('Decision needed'))).toEqual([]);
  });
});
