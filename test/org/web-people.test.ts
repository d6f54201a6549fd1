/**
 * /people (DESIGN 4.6, issue 19 items 4 and 5): who is in which space with what role. Owners and admins see
 * every space and person; a member sees their spaces and the people in them, nothing else, and never a password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertPerson } from '../../src/org/people/records.js';
import { addSpaceMember } from '../../src/org/spaces/records.js';
import { BEA, CY, DEE, startConsoleOrg, type ConsoleOrg } from '../helpers/console-org.js';
import { engines } from '../helpers/databases.js';
import { OWNER } from '../helpers/org.js';
import type { Browserless } from '../helpers/web-client.js';

describe.each(engines)('the people page on %s', (engine) => {
  let c: ConsoleOrg;
  let owner: Browserless;
  let bea: Browserless;
  let cy: Browserless;
  let dee: Browserless;
  beforeAll(async () => {
    c = await startConsoleOrg(engine);
    [owner, bea, cy, dee] = await Promise.all([c.signIn(OWNER), c.signIn(BEA), c.signIn(CY), c.signIn(DEE)]);
  });
  afterAll(async () => {
    await c?.close();
  });

  /** The table row of the person named `name`, as text without markup. */
  function row(html: string, name: string): string | undefined {
    const rows = [...html.matchAll(/<tr>(.*?)<\/tr>/g)].map((match) => match[1].replace(/<[^>]+>/g, '|'));
    return rows.find((text) => text.includes(`|${name}|`));
  }

  it('shows an owner and an admin every space and every person, with roles and spaces', async () => {
    for (const viewer of [owner, dee]) {
      const page = await viewer.get('/people');
      expect(page.status).toBe(200);
      for (const space of ['General', 'Backroom', 'Hideaway']) expect(page.text).toContain(`>${space}</a>`);
      expect(row(page.text, BEA.name)).toMatch(/bea@example\.com.*member.*General, Hideaway/);
      expect(row(page.text, CY.name)).toMatch(/cy@example\.com.*member.*Backroom/);
      expect(row(page.text, DEE.name)).toMatch(/dee@example\.com.*admin.*none/);
      expect(row(page.text, 'Owner')).toMatch(/owner@example\.com.*owner.*Backroom, General/);
    }
  });

  it('shows a member only their spaces, the people in them, and only the spaces they share', async () => {
    const page = await bea.get('/people');
    expect(page.status).toBe(200);
    expect(page.text).toContain('>General</a>');
    expect(page.text).toContain('>Hideaway</a>');
    for (const hidden of ['Backroom', c.spaces.ops, CY.name, CY.email, DEE.name, DEE.email]) expect(page.text).not.toContain(hidden);
    // The owner is in Bea's space General, and in Backroom, which Bea does not see.
    expect(row(page.text, 'Owner')).toMatch(/owner@example\.com.*owner.*\|General\|/);
    const cyPage = await cy.get('/people');
    for (const hidden of ['General', 'Hideaway', BEA.name, BEA.email, DEE.email]) expect(cyPage.text).not.toContain(hidden);
    expect(row(cyPage.text, CY.name)).toMatch(/Backroom/);
  });

  it('lists the people of one space, and answers another space as not found', async () => {
    const general = await owner.get(`/people?space=${c.spaces.general}`);
    expect(general.text).toContain('People in General');
    expect(row(general.text, BEA.name)).toBeDefined();
    expect(row(general.text, CY.name)).toBeUndefined();
    const hidden = await bea.get(`/people?space=${c.spaces.ops}`);
    expect(hidden.status).toBe(404);
    expect(hidden.text).not.toContain(CY.email);
  });

  it('links each person to what was done by or for them in the activity log', async () => {
    const page = await bea.get('/people');
    const [, href] = /<td data-label="Name"><a href="([^"]+)" title="What was done by or for Bea Member">Bea Member<\/a>/.exec(page.text) ?? [];
    expect(href).toMatch(/^\/activity\?person=per_/);
    const activity = await bea.get(href);
    expect(activity.status).toBe(200);
    expect(activity.text).toContain('signed in on the web');
  });

  it('never shows a password hash', async () => {
    for (const viewer of [owner, bea]) expect((await viewer.get('/people')).text).not.toMatch(/scrypt\$/);
  });

  it('pages through more people than a page holds, each once, by name', async () => {
    const db = c.org.service.ctx.db;
    for (let index = 0; index < 55; index++) {
      const { person } = await upsertPerson(db, { email: `page${index}@example.com`, name: `Paged Person ${String(index).padStart(2, '0')}`, role: 'member' });
      await addSpaceMember(db, c.spaces.secret, person.id);
    }
    const names: string[] = [];
    let path: string | undefined = `/people?space=${c.spaces.secret}`;
    for (let pages = 0; path && pages < 5; pages++) {
      const page = await bea.get(path);
      expect(page.status).toBe(200);
      names.push(...[...page.text.matchAll(/<td data-label="Name"><a href="\/activity\?person=per_[^"]+" title="[^"]+">([^<]+)<\/a>/g)].map((match) => match[1]));
      path = /<a href="([^"]+)">Next page<\/a>/.exec(page.text)?.[1]?.replaceAll('&amp;', '&');
    }
    expect(names).toHaveLength(56);
    expect(names).toEqual([...names].sort());
    expect(new Set(names).size).toBe(56);
  });

  it('refuses a cursor it did not hand out with 400', async () => {
    expect((await owner.get('/people?cursor=abc')).status).toBe(400);
  });
});
