/**
 * New task (GET /tasks/new, POST /tasks) and Cancel this task (POST /tasks/:id/cancel) on the console (DESIGN 4.6),
 * end to end: the same createTask and cancelTask as create_task and cancel_task, in the person's own spaces only
 * (an owner sees every space's tasks but places work in theirs), a refused form shown again with nothing written,
 * the CSRF token required, and a signed-out visitor sent to sign in.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEA, CY, startConsoleOrg, type ConsoleOrg } from '../helpers/console-org.js';
import { engines } from '../helpers/databases.js';
import { OWNER } from '../helpers/org.js';
import { Browserless } from '../helpers/web-client.js';

describe.each(engines)('creating and cancelling tasks on the console on %s', (engine) => {
  let c: ConsoleOrg;
  let owner: Browserless;
  let bea: Browserless;
  let cy: Browserless;
  let scribe: string;
  let ownerId: string;
  beforeAll(async () => {
    c = await startConsoleOrg(engine);
    [owner, bea, cy] = await Promise.all([c.signIn(OWNER), c.signIn(BEA), c.signIn(CY)]);
    [{ id: scribe }] = await c.org.service.database.rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'scribe'`);
    [{ id: ownerId }] = await c.org.service.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${OWNER.email}`);
  });
  afterAll(async () => {
    await c?.close();
  });

  const rows = <T extends Record<string, unknown>>(query: ReturnType<typeof sql>) => c.org.service.database.rows<T>(query);
  const taskCount = async () => (await rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM tasks`))[0].n;

  /** Posts the new-task form as `browser` fills it, with the CSRF token of the form page. */
  async function postTask(browser: Browserless, fields: Record<string, string>) {
    const form = await browser.get('/tasks/new');
    return browser.post('/tasks', { csrf: browser.hidden(form.text, 'csrf'), schedule: 'none', ...fields });
  }

  /** The task a successful post redirected to. */
  function createdId(answer: { status: number; headers: Headers }): string {
    expect(answer.status).toBe(303);
    const location = answer.headers.get('location') ?? '';
    expect(location).toMatch(/^\/tasks\/tsk_[^/]+$/);
    return location.slice('/tasks/'.length);
  }

  async function cancel(browser: Browserless, taskId: string, reason = '') {
    const page = await browser.get(`/tasks/${taskId}`);
    return browser.post(`/tasks/${taskId}/cancel`, { csrf: browser.hidden(page.text, 'csrf'), reason });
  }

  it('links New task from the board to a form offering only the person’s own spaces, not every space they see', async () => {
    expect((await owner.get('/tasks')).text).toContain('<a href="/tasks/new" role="button">New task</a>');
    const form = await owner.get('/tasks/new');
    expect(form.status).toBe(200);
    expect(form.text).toContain('<h1>New task</h1>');
    expect(form.text).toContain(`<option value="${c.spaces.general}"`);
    expect(form.text).toContain(`<option value="${c.spaces.ops}"`);
    expect(form.text).not.toContain(c.spaces.secret);
    expect(form.text).toContain(`<option value="${scribe}">Scribe</option>`);
    expect(form.text).toMatch(/<input type="hidden" name="csrf" value="[^"]+"/);
  });

  it('creates an unassigned task through the form, as the person, without a client', async () => {
    const before = await taskCount();
    const id = createdId(await postTask(bea, { space_id: c.spaces.secret, title: 'Water the hideaway plants', description: 'Twice a week.' }));
    expect(await taskCount()).toBe(before + 1);
    const page = await bea.get(`/tasks/${id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Water the hideaway plants</h1>');
    expect(page.text).toContain('<dt>Assigned to</dt><dd>nobody</dd>');
    expect(page.text).toContain(`<dt>Created by</dt><dd>${BEA.name}</dd>`);
    expect(page.text).toContain('Twice a week.');
    const [row] = await rows<{ space_id: string; client_id: string | null; assignee_agent_id: string | null }>(
      sql`SELECT space_id, client_id, assignee_agent_id FROM tasks WHERE id = ${id}`,
    );
    expect(row).toEqual({ space_id: c.spaces.secret, client_id: null, assignee_agent_id: null });
    // No operation: nobody was sent anything.
    expect(page.text).toContain('No operation worked on this task yet.');
  });

  it('delivers a task assigned to an agent: its operation starts and the agent takes the task', async () => {
    const id = createdId(await postTask(owner, { space_id: c.spaces.general, title: 'Draft the newsletter', assignee_agent_id: scribe }));
    const [operation] = await rows<{ id: string; kind: string; agent_id: string; client_id: string | null; person_id: string }>(
      sql`SELECT o.id, o.kind, o.agent_id, o.client_id, o.person_id FROM task_progress p JOIN operations o ON o.id = p.operation_id WHERE p.task_id = ${id}`,
    );
    expect(operation).toMatchObject({ kind: 'task', agent_id: scribe, client_id: null, person_id: ownerId });
    // Scribe answers its delivery 202: it has the task, and the task is in progress.
    let status = '';
    for (let waited = 0; status !== 'in_progress' && waited < 20_000; waited += 50) {
      [{ status }] = await rows<{ status: string }>(sql`SELECT status FROM tasks WHERE id = ${id}`);
      if (status !== 'in_progress') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe('in_progress');
    const page = await owner.get(`/tasks/${id}`);
    expect(page.text).toContain(`<dt>Assigned to</dt><dd><a href="/agents/${scribe}">Scribe</a></dd>`);
    expect(page.text).toContain(`<a href="/operations/${operation.id}">${operation.id}</a>`);
    // The operations list says which task its run is about.
    expect((await owner.get('/operations?kind=task')).text).toContain('<td data-label="Kind">task<small>: Draft the newsletter</small></td>');
  });

  it('creates a task scheduled once at a local time, or repeatedly by cron, in the zone given', async () => {
    const once = createdId(
      await postTask(owner, { space_id: c.spaces.general, title: 'Send the launch note', schedule: 'at', at: '2099-05-04T09:00', timezone: 'Europe/Berlin' }),
    );
    const onceRow = await rows<{ schedule: unknown; next_run_at: string }>(
      sql`SELECT schedule, to_char(next_run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS next_run_at FROM tasks WHERE id = ${once}`,
    );
    expect(onceRow).toEqual([{ schedule: { at: '2099-05-04T09:00:00', timezone: 'Europe/Berlin' }, next_run_at: '2099-05-04T07:00' }]);
    const repeated = createdId(
      await postTask(owner, { space_id: c.spaces.ops, title: 'Check the backups', schedule: 'cron', cron: '30 6 * * 1-5', timezone: 'America/New_York', at: '2099-01-01T00:00' }),
    );
    const page = await owner.get(`/tasks/${repeated}`);
    expect(page.text).toContain('<code>30 6 * * 1-5</code>');
    expect(page.text).toContain('<dt>Time zone</dt><dd>America/New_York</dd>');
  });

  it('shows a refused form again with its problems and the person’s values, answered 400, and writes nothing', async () => {
    const before = await taskCount();
    const cases: Array<{ fields: Record<string, string>; problem: string }> = [
      { fields: { schedule: 'cron', cron: '0 9 * *', timezone: 'Europe/Berlin' }, problem: 'Cron expression: expected five fields' },
      { fields: { schedule: 'cron', cron: '0 9 * * 1' }, problem: 'Time zone: an IANA time zone such as Europe/Berlin is required' },
      { fields: { schedule: 'at', at: '2020-01-01T09:00', timezone: 'Europe/Berlin' }, problem: 'Date and time: is in the past' },
      { fields: { assignee_agent_id: 'agt_nobody' }, problem: 'Assign to: no such agent' },
      { fields: { title: '  ' }, problem: 'Title:' },
    ];
    for (const { fields, problem } of cases) {
      const answer = await postTask(bea, { space_id: c.spaces.general, title: 'Sort the kestrel photos', description: 'All of them, please.', ...fields });
      expect(answer.status, problem).toBe(400);
      expect(answer.text, problem).toContain('Nothing was saved:');
      expect(answer.text, problem).toContain(problem);
      if (fields.title === undefined) expect(answer.text, problem).toContain('value="Sort the kestrel photos"');
      expect(answer.text, problem).toContain('All of them, please.');
      expect(answer.text, problem).toContain(`<option value="${c.spaces.general}" selected>`);
    }
    expect(await taskCount()).toBe(before);
  });

  it('refuses a space that is not the person’s, even one an owner sees, and writes nothing', async () => {
    const before = await taskCount();
    const memberElsewhere = await postTask(bea, { space_id: c.spaces.ops, title: 'Sneak into the backroom' });
    expect(memberElsewhere.status).toBe(404);
    expect(memberElsewhere.text).toContain('space not found');
    const ownerSeesOnly = await postTask(owner, { space_id: c.spaces.secret, title: 'Peek into the hideaway' });
    expect(ownerSeesOnly.status).toBe(404);
    expect(ownerSeesOnly.text).toContain('space not found');
    expect(await taskCount()).toBe(before);
  });

  it('cancels a task with a reason, and the work its agent has under way with it; the page no longer offers it', async () => {
    const id = createdId(await postTask(cy, { space_id: c.spaces.ops, title: 'Rotate the badger keys', assignee_agent_id: scribe }));
    const offered = await cy.get(`/tasks/${id}`);
    expect(offered.text).toContain('<button type="submit" class="secondary">Cancel this task</button>');
    const answer = await cancel(cy, id, 'Not needed after all');
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`/tasks/${id}`);
    const page = await cy.get(`/tasks/${id}`);
    expect(page.text).toContain('<span class="badge cancelled">Cancelled</span>');
    expect(page.text).toContain('Cancelled: Not needed after all');
    expect(page.text).not.toContain('Cancel this task');
    const operations = await rows<{ status: string }>(sql`SELECT DISTINCT o.status FROM task_progress p JOIN operations o ON o.id = p.operation_id WHERE p.task_id = ${id}`);
    expect(operations).toEqual([{ status: 'cancelled' }]);
  });

  it('refuses to cancel a cancelled task again with 409, and changes nothing', async () => {
    const id = createdId(await postTask(bea, { space_id: c.spaces.general, title: 'Book the minibus' }));
    expect((await cancel(bea, id)).status).toBe(303);
    const progress = async () => (await rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM task_progress WHERE task_id = ${id}`))[0].n;
    const events = await progress();
    const again = await cancel(bea, id, 'Once more');
    expect(again.status).toBe(409);
    expect(again.text).toContain('the task is cancelled, so it cannot be cancelled');
    expect(await progress()).toBe(events);
  });

  it('offers no cancel of a task outside the person’s own spaces, and refuses one posted as not found', async () => {
    const page = await owner.get(`/tasks/${c.tasks.secret}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('Cancel this task');
    const refused = await cancel(owner, c.tasks.secret);
    expect(refused.status).toBe(404);
    expect(refused.text).toContain('task not found');
    const [{ status }] = await rows<{ status: string }>(sql`SELECT status FROM tasks WHERE id = ${c.tasks.secret}`);
    expect(status).toBe('open');
  });

  it('refuses either form without its CSRF token with 403, and writes nothing', async () => {
    const before = await taskCount();
    const created = await bea.post('/tasks', { space_id: c.spaces.general, title: 'Forged task', schedule: 'none' });
    expect(created.status).toBe(403);
    expect(created.text).toContain('This form has expired');
    expect(await taskCount()).toBe(before);
    const cancelled = await bea.post(`/tasks/${c.tasks.secret}/cancel`, { csrf: 'forged', reason: 'forged' });
    expect(cancelled.status).toBe(403);
    const [{ status }] = await rows<{ status: string }>(sql`SELECT status FROM tasks WHERE id = ${c.tasks.secret}`);
    expect(status).toBe('open');
  });

  it('sends a visitor who is not signed in to sign in, for the form and for its posts', async () => {
    const visitor = new Browserless(c.org.url);
    const before = await taskCount();
    for (const answer of [
      await visitor.get('/tasks/new'),
      await visitor.post('/tasks', { space_id: c.spaces.general, title: 'Anonymous task' }),
      await visitor.post(`/tasks/${c.tasks.secret}/cancel`, {}),
    ]) {
      expect(answer.status).toBe(303);
      expect(answer.headers.get('location')).toMatch(/^\/signin\?return_to=%2Ftasks/);
    }
    expect(await taskCount()).toBe(before);
  });

  it('records the web’s create and cancel as the person’s own, through no client', async () => {
    const id = createdId(await postTask(bea, { space_id: c.spaces.secret, title: 'Feed the kestrels' }));
    expect((await cancel(bea, id, 'They flew off')).status).toBe(303);
    const entries = await rows<{ kind: string; summary: string; client_id: string | null; person_name: string }>(
      sql`SELECT a.kind, a.summary, a.client_id, p.name AS person_name FROM org_activity a JOIN people p ON p.id = a.person_id WHERE a.subject = ${id} ORDER BY a.seq`,
    );
    expect(entries).toEqual([
      { kind: 'task.created', summary: 'created a task (“Feed the kestrels”)', client_id: null, person_name: BEA.name },
      { kind: 'task.updated', summary: 'task cancel: Cancelled: They flew off (“Feed the kestrels”)', client_id: null, person_name: BEA.name },
    ]);
    const activity = await bea.get('/activity?kind=task');
    const row = activity.text.split('<tr>').find((cells) => cells.includes('created a task (“Feed the kestrels”)'));
    expect(row).toMatch(/<td data-label="Who"><a href="\/activity\?person=[^"]+">Bea Member<\/a><\/td>/);
  });
});
