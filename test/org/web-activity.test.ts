/**
 * The activity page and its export, as people use them: filters, the views per person and per agent, paging,
 * JSON Lines, a bad query refused with 400, and scope — a member never sees another space's entries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordActivity } from '../../src/org/activity/records.js';
import { upsertPerson } from '../../src/org/people/records.js';
import { createTask } from '../../src/org/tasks/person.js';
import { addSpaceMember, upsertSpace } from '../../src/org/spaces/records.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { Browserless } from '../helpers/web-client.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

describe.each(engines)('the activity page on %s', (engine) => {
  let org: TestOrg;
  let member: { id: string };
  let web: { id: string };
  let hr: { id: string };

  beforeAll(async () => {
    org = await startOrg(engine);
    const { db } = org.service.ctx;
    member = (await upsertPerson(db, { email: 'mia@example.com', name: 'Mia Member', role: 'member', password: 'mia-password-123' })).person;
    web = (await upsertSpace(db, { key: 'web', name: 'Website' })).space;
    hr = (await upsertSpace(db, { key: 'hr', name: 'People team' })).space;
    await addSpaceMember(db, web.id, member.id);
    await db.transaction(async (tx) => {
      for (let index = 0; index < 60; index += 1) {
        await recordActivity(tx, { kind: 'memory.written', summary: `website note ${index}`, spaceId: web.id, subject: `mem_web_${index}` });
      }
      await recordActivity(
        tx,
        { kind: 'memory.written', summary: 'salary review notes', spaceId: hr.id, subject: 'mem_hr_secret' },
        { kind: 'decision.resolved', summary: 'approved a payout in hr', spaceId: hr.id, traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
        { kind: 'person.signed_in', summary: 'Mia Member signed in', personId: member.id },
        { kind: 'decision.opened', summary: 'asked to publish the launch post', spaceId: web.id, traceparent: `00-${TRACE_ID}-00f067aa0ba902b8-01` },
      );
    });
  });
  afterAll(async () => {
    await org?.close();
  });

  it('shows an owner everything, newest first, 50 to a page with a link to older entries', async () => {
    const owner = new Browserless(org.url);
    await owner.signIn(OWNER.email, OWNER.password);
    const page = await owner.get('/activity');
    expect(page.status).toBe(200);
    expect(page.text).toContain('salary review notes');
    expect(page.text.indexOf('asked to publish the launch post')).toBeLessThan(page.text.indexOf('website note 59'));
    expect(page.text.match(/<tr>/g)?.length).toBe(51); // the header row and 50 entries
    const older = /href="(\/activity\?before=\d+)"/.exec(page.text)?.[1];
    expect(older).toBeDefined();
    const next = await owner.get(older!.replaceAll('&amp;', '&'));
    expect(next.text).toContain('website note 0');
    expect(next.text).not.toContain('asked to publish the launch post');
  });

  it('filters by kind family, by trace and by person, and refuses a bad filter with 400', async () => {
    const owner = new Browserless(org.url);
    await owner.signIn(OWNER.email, OWNER.password);
    const decisions = await owner.get('/activity?kind=decision&person=&space=');
    expect(decisions.text).toContain('approved a payout in hr');
    expect(decisions.text).toContain('asked to publish the launch post');
    expect(decisions.text).not.toContain('website note');
    const trace = await owner.get(`/activity?trace=${TRACE_ID}`);
    expect(trace.text.match(/<tr>/g)?.length).toBe(3);
    const person = await owner.get(`/activity?person=${member.id}`);
    expect(person.text).toContain('Mia Member signed in');
    expect(person.text).not.toContain('website note');
    for (const bad of ['/activity?before=abc', '/activity?kind=DROP%20TABLE', '/activity?from=2026-13-45', `/activity?trace=${'z'.repeat(32)}`]) {
      const refused = await owner.get(bad);
      expect(refused.status, bad).toBe(400);
      expect(refused.text).not.toContain('website note');
    }
  });

  it('shows a member their spaces and their own entries, and nothing of another space, on the page and in the export', async () => {
    const mia = new Browserless(org.url);
    await mia.signIn('mia@example.com', 'mia-password-123');
    const page = await mia.get('/activity');
    expect(page.text).toContain('asked to publish the launch post');
    expect(page.text).toContain('Mia Member signed in');
    for (const hidden of ['salary review notes', 'approved a payout in hr', 'People team', hr.id]) expect(page.text).not.toContain(hidden);
    // Asking for the other space by id or by its trace changes nothing.
    const other = await mia.get(`/activity?space=${hr.id}`);
    expect(other.text).toContain('No activity matches.');
    const traced = await mia.get(`/activity?trace=${TRACE_ID}`);
    expect(traced.text).not.toContain('approved a payout in hr');

    const exported = await mia.get('/activity/export.jsonl');
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = exported.text.trim().split('\n').map((line) => JSON.parse(line));
    // Sixty website notes and the decision in the website space; sign-ins (hers, recorded as they happen) are hers too.
    expect(lines.filter((line) => line.kind !== 'person.signed_in')).toHaveLength(61);
    expect(lines.filter((line) => line.kind === 'person.signed_in').every((line) => line.person_id === member.id)).toBe(true);
    expect(lines[0].summary).toBe('website note 0');
    expect(lines.map((line) => line.seq)).toEqual([...lines.map((line) => line.seq)].sort((a, b) => a - b));
    expect(lines.some((line) => line.space_id === hr.id)).toBe(false);
  });

  it('links an entry to the record it is about, which opens for the person who sees the entry', async () => {
    const { ctx } = org.service;
    const task = await createTask(ctx, ctx.db, { space_id: web.id, title: 'Proofread the launch post' }, { personId: member.id, clientId: null, spaceIds: [web.id] });
    await recordActivity(ctx.db, { kind: 'memory.written', summary: 'an entry about no page', spaceId: web.id, subject: 'constructor_x' });
    const mia = new Browserless(org.url);
    await mia.signIn('mia@example.com', 'mia-password-123');
    const page = await mia.get('/activity?kind=task');
    const row = page.text.split('<tr>').find((cells) => cells.includes('Proofread the launch post'));
    expect(row).toContain(`href="/tasks/${task.id}">task</a>`);
    const opened = await mia.get(`/tasks/${task.id}`);
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('Proofread the launch post');
    const notes = await mia.get('/activity?kind=memory');
    expect(notes.text.split('<tr>').find((cells) => cells.includes('website note 59'))).toContain('href="/memory/mem_web_59">memory item</a>');
    const unknown = notes.text.split('<tr>').find((cells) => cells.includes('an entry about no page'));
    expect(unknown).toBeDefined();
    expect(unknown).not.toContain('constructor_x');
  });

  it('sends a visitor who is not signed in to sign in first', async () => {
    const response = await new Browserless(org.url).get('/activity?kind=decision');
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/signin?return_to=%2Factivity%3Fkind%3Ddecision');
  });
});
