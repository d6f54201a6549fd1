/**
 * Spaces from the console (issue 20 item 1): an owner or admin creates a space, renames it, adds and takes out
 * members, each visible on /people and in the activity log; a bad key is 400 and writes nothing; a space the
 * organization file declares is changed only there.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { csrfOf, startManageOrg, type ManageOrg } from '../helpers/people-org.js';

describe.each(engines)('spaces from the console on %s', (engine) => {
  let m: ManageOrg;
  beforeAll(async () => {
    m = await startManageOrg(engine);
  });
  afterAll(async () => {
    await m?.close();
  });

  /** The row of /people (as text) naming `name`. */
  const row = (html: string, name: string) =>
    [...html.matchAll(/<tr>(.*?)<\/tr>/g)].map((match) => match[1].replace(/<[^>]+>/g, '|')).find((text) => text.includes(`|${name}|`));

  it('creates, renames and fills a space, shown on /people and recorded', async () => {
    const lu = await m.addPerson({ email: 'lu@example.com', name: 'Lu Later' });
    const created = await m.owner.post('/people/spaces', { csrf: await csrfOf(m.owner), key: 'design', name: 'Design' });
    expect(created.status).toBe(303);
    const spaceId = new URL(created.headers.get('location')!, m.org.url).searchParams.get('space')!;
    expect(created.headers.get('location')).toBe(`/people?space=${spaceId}&done=space_created`);

    const page = await m.owner.get(created.headers.get('location')!);
    expect(page.text).toContain('The space was created.');
    expect(page.text).toContain('<h2>Manage Design</h2>');
    expect(row(page.text, 'Design')).toMatch(/design.*\|0\|/);
    // Lu is offered to be added; the owner made the space but is not in it either.
    expect(page.text).toContain('Lu Later (lu@example.com)');

    const add = await m.owner.post('/people/spaces/members/add', { csrf: await csrfOf(m.owner), space_id: spaceId, person_id: lu.id });
    expect(add.status).toBe(303);
    expect(add.headers.get('location')).toBe(`/people?space=${spaceId}&done=member_added`);
    const rename = await m.owner.post('/people/spaces/rename', { csrf: await csrfOf(m.owner), space_id: spaceId, name: 'Product design' });
    expect(rename.status).toBe(303);
    const everyone = await m.owner.get('/people');
    expect(row(everyone.text, 'Lu Later')).toMatch(/lu@example\.com.*member.*Product design/);
    expect(row(everyone.text, 'Product design')).toMatch(/\|1\|/);
    // Lu sees the space as theirs.
    expect((await lu.browser.get('/people')).text).toContain('>Product design</a>');

    const out = await m.owner.post('/people/spaces/members/remove', { csrf: await csrfOf(m.owner), space_id: spaceId, person_id: lu.id });
    expect(out.status).toBe(303);
    expect(row((await m.owner.get('/people')).text, 'Lu Later')).toMatch(/\|none\|/);

    const summaries = async (kind: string) => (await m.activity(kind)).map((entry) => entry.summary);
    expect(await summaries('space.created')).toEqual(['created the space Design (design)']);
    expect(await summaries('space.member_added')).toEqual(['added Lu Later to the space Design']);
    expect(await summaries('space.renamed')).toEqual(['renamed the space Design to Product design']);
    expect(await summaries('space.member_removed')).toEqual(['took Lu Later out of the space Product design']);
  });

  it('refuses a bad or taken key and an empty name with 400, writing nothing', async () => {
    const csrf = await csrfOf(m.owner);
    const count = async () => (await m.org.service.database.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM spaces`))[0].n;
    const before = await count();
    const bad = await m.owner.post('/people/spaces', { csrf, key: 'Not A Key', name: 'Whatever' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('key: must be lower-case letters, digits, &quot;_&quot; or &quot;-&quot; (at most 64)');
    const taken = await m.owner.post('/people/spaces', { csrf, key: 'general', name: 'Again' });
    expect(taken.status).toBe(400);
    expect(taken.text).toContain('a space with the key general already exists');
    const empty = await m.owner.post('/people/spaces/rename', { csrf, space_id: m.spaces.ops, name: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('name: must not be empty');
    const nul = await m.owner.post('/people/spaces', { csrf, key: 'nul', name: 'a\u0000b' });
    expect(nul.status).toBe(400);
    expect(await count()).toBe(before);
  });

  it('refuses to change a space the organization file declares, and offers no controls for it', async () => {
    await m.org.service.database.rows(sql`UPDATE spaces SET managed_by = 'file' WHERE id = ${m.spaces.ops}`);
    const csrf = await csrfOf(m.owner);
    const rename = await m.owner.post('/people/spaces/rename', { csrf, space_id: m.spaces.ops, name: 'Ops' });
    expect(rename.status).toBe(409);
    expect(rename.text).toContain('The space Operations is managed by the organization file (org.yaml): change it there and apply the file again (npx atrium org apply)');
    const [owner] = await m.org.service.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE role = 'owner'`);
    const out = await m.owner.post('/people/spaces/members/remove', { csrf, space_id: m.spaces.ops, person_id: owner.id });
    expect(out.status).toBe(409);
    const page = await m.owner.get(`/people?space=${m.spaces.ops}`);
    expect(row(page.text, 'Operations')).toContain('from org.yaml');
    expect(page.text).not.toContain('Manage Operations');
  });
});
