/**
 * /tasks and /tasks/:id (DESIGN 4.6, issue 19 items 4 and 5): a board with a column per status, filtered by
 * space and assignee; a task's page with its schedule and next runs in its own zone, questions and answers,
 * progress and operations. A member sees no task of another space, and another space's task is answered
 * exactly as an unknown one.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask } from '../../src/org/tasks/person.js';
import { TASK_STATUSES } from '../../src/org/tasks/states.js';
import { BEA, CY, startConsoleOrg, type ConsoleOrg } from '../helpers/console-org.js';
import { engines } from '../helpers/databases.js';
import { OWNER } from '../helpers/org.js';
import type { Browserless } from '../helpers/web-client.js';

describe.each(engines)('the task pages on %s', (engine) => {
  let c: ConsoleOrg;
  let owner: Browserless;
  let bea: Browserless;
  let cy: Browserless;
  let scribe: string;
  beforeAll(async () => {
    c = await startConsoleOrg(engine);
    [owner, bea, cy] = await Promise.all([c.signIn(OWNER), c.signIn(BEA), c.signIn(CY)]);
    [{ id: scribe }] = await c.org.service.database.rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'scribe'`);
  });
  afterAll(async () => {
    await c?.close();
  });

  /** The ids of the tasks in the board's column `status`. */
  function column(html: string, status: string): string[] {
    const section = new RegExp(`<section aria-labelledby="column-${status}">(.*?)</section>`).exec(html)?.[1] ?? '';
    return [...section.matchAll(/href="\/tasks\/(tsk_[^"]+)"/g)].map((match) => match[1]);
  }

  it('shows the owner a column per status with every space’s tasks in its own', async () => {
    const page = await owner.get('/tasks');
    expect(page.status).toBe(200);
    for (const status of TASK_STATUSES) expect(page.text).toContain(`id="column-${status}"`);
    expect(column(page.text, 'waiting')).toEqual([c.tasks.worked]);
    expect(column(page.text, 'open').sort()).toEqual([c.tasks.weekly, c.tasks.ops, c.tasks.secret].sort());
    expect(page.text).toMatch(/next run \d{4}-\d{2}-\d{2} 09:00:00 Europe\/Berlin/);
  });

  it('filters by space and by assignee, and lists one status alone', async () => {
    const ops = await owner.get(`/tasks?space=${c.spaces.ops}&assignee=`);
    expect(column(ops.text, 'open')).toEqual([c.tasks.ops]);
    expect(column(ops.text, 'waiting')).toEqual([]);
    const scribes = await owner.get(`/tasks?assignee=${scribe}`);
    expect(column(scribes.text, 'waiting')).toEqual([c.tasks.worked]);
    expect(column(scribes.text, 'open')).toEqual([]);
    const open = await owner.get(`/tasks?status=open&space=${c.spaces.general}`);
    expect(column(open.text, 'open')).toEqual([c.tasks.weekly]);
    expect(open.text).not.toContain('id="column-waiting"');
  });

  it('shows a member no task of a space they are not in, on the board or by filter', async () => {
    for (const path of ['/tasks', '/tasks?status=open', `/tasks?assignee=${scribe}`]) {
      const page = await bea.get(path);
      expect(page.status, path).toBe(200);
      for (const hidden of [c.tasks.ops, 'Rotate the zebra keys', 'Backroom', c.spaces.ops]) expect(page.text, path).not.toContain(hidden);
    }
    expect(column((await bea.get('/tasks')).text, 'open').sort()).toEqual([c.tasks.weekly, c.tasks.secret].sort());
    const cyBoard = await cy.get('/tasks');
    for (const hidden of [c.tasks.worked, c.tasks.weekly, c.tasks.secret, 'Hideaway', 'Plan the offsite']) expect(cyBoard.text).not.toContain(hidden);
    expect(column(cyBoard.text, 'open')).toEqual([c.tasks.ops]);
    // Another space as a filter lists nothing of it.
    const filtered = await bea.get(`/tasks?space=${c.spaces.ops}`);
    expect(filtered.text).not.toContain(c.tasks.ops);
  });

  it('shows a task with its questions and answers, progress and operations', async () => {
    const page = await bea.get(`/tasks/${c.tasks.worked}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Plan the offsite</h1>');
    expect(page.text).toContain('Waiting for a person');
    expect(page.text).toContain(`<dt>Assigned to</dt><dd><a href="/agents/${scribe}">Scribe</a></dd>`);
    expect(page.text).toContain('<dt>Created by</dt><dd>Owner</dd>');
    expect(page.text).toContain('<strong>Which city suits everyone?</strong>');
    expect(page.text).toContain('Answer: Lisbon, please');
    expect(page.text).toMatch(/by Owner, <time/);
    expect(page.text).toContain('<strong>Is a budget of 5000 fine?</strong>');
    expect(page.text).toMatch(/Not answered yet: <a href="\/inbox#answer-q_[^"]+">answer it in the inbox<\/a>/);
    expect(page.text).toContain('Looked at venues (40%)');
    expect(page.text).toContain(`<a href="/operations/${c.operation}">${c.operation}</a>`);
    expect(page.text).toContain('<p>Not scheduled.</p>');
  });

  it('shows a schedule’s next runs as local times in its own time zone, each the instant it names', async () => {
    const page = await owner.get(`/tasks/${c.tasks.weekly}`);
    expect(page.text).toContain('<code>0 9 * * 1</code>');
    expect(page.text).toContain('<dt>Time zone</dt><dd>Europe/Berlin</dd>');
    const runs = [...page.text.matchAll(/<li>(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) Europe\/Berlin <small>\(<time datetime="([^"]+)"/g)];
    expect(runs).toHaveLength(5);
    for (const [, local, utc] of runs) {
      expect(local).toMatch(/ 09:00:00$/);
      expect(new Date(utc).toLocaleString('sv-SE', { timeZone: 'Europe/Berlin' })).toBe(local);
      expect(new Date(utc).toLocaleDateString('en-GB', { timeZone: 'Europe/Berlin', weekday: 'long' })).toBe('Monday');
    }
    const [{ next_run_at: stored }] = await c.org.service.database.rows<{ next_run_at: string }>(
      sql`SELECT to_char(next_run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') AS next_run_at FROM tasks WHERE id = ${c.tasks.weekly}`,
    );
    expect(runs[0][2].slice(0, 19)).toBe(stored);
  });

  it('answers another space’s task exactly as an unknown one', async () => {
    const hidden = await bea.get(`/tasks/${c.tasks.ops}`);
    const unknown = await bea.get('/tasks/tsk_doesnotexist');
    expect(hidden.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(hidden.text).toBe(unknown.text);
    expect(hidden.text).not.toContain('zebra');
    expect((await cy.get(`/tasks/${c.tasks.worked}`)).status).toBe(404);
    expect((await owner.get(`/tasks/${c.tasks.secret}`)).status).toBe(200);
  });

  it('links a full column to its own list, which pages through every task of that status once', async () => {
    const [{ id: person }] = await c.org.service.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE email = ${BEA.email}`);
    for (let index = 0; index < 55; index++) {
      await createTask(c.org.service.ctx, c.org.service.ctx.db, { space_id: c.spaces.secret, title: `Paged task ${index}` }, { personId: person, clientId: null, spaceIds: [c.spaces.secret] });
    }
    const board = await bea.get('/tasks');
    expect(column(board.text, 'open')).toHaveLength(10);
    const more = /<a href="([^"]+)">More open tasks<\/a>/.exec(board.text)?.[1];
    expect(more).toBe('/tasks?status=open');
    const seen: string[] = [];
    let path: string | undefined = more;
    for (let pages = 0; path && pages < 5; pages++) {
      const page = await bea.get(path);
      seen.push(...column(page.text, 'open'));
      path = /<a href="([^"]+)">Next page<\/a>/.exec(page.text)?.[1]?.replaceAll('&amp;', '&');
    }
    // Bea's open tasks: the 55, the weekly report in General and her own in Hideaway.
    expect(seen).toHaveLength(57);
    expect(new Set(seen).size).toBe(57);
    expect(seen).not.toContain(c.tasks.ops);
  });

  it('refuses a bad query string with 400', async () => {
    expect((await owner.get('/tasks?status=sleeping')).status).toBe(400);
    expect((await owner.get('/tasks?status=open&cursor=yesterday')).status).toBe(400);
  });
});
