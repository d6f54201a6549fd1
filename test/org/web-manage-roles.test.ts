/**
 * Roles and names from the console (issue 20 item 1): an owner gives any role and corrects anyone's name; an admin
 * gives admin or member but never makes, changes, renames or removes an owner; the organization always keeps an
 * owner; a person the organization file declares is changed only there (409 naming the file, and no controls on the
 * page).
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { csrfOf, startManageOrg, type ManageOrg } from '../helpers/people-org.js';

describe.each(engines)('roles on %s', (engine) => {
  let m: ManageOrg;
  let ownerId: string;
  beforeAll(async () => {
    m = await startManageOrg(engine);
    [{ id: ownerId }] = await m.org.service.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE role = 'owner'`);
  });
  afterAll(async () => {
    await m?.close();
  });

  const role = async (by: ManageOrg['owner'], personId: string, to: string) =>
    by.post('/people/role', { csrf: await csrfOf(by), person_id: personId, role: to });
  const roleOf = async (personId: string) =>
    (await m.org.service.database.rows<{ role: string }>(sql`SELECT role FROM people WHERE id = ${personId}`))[0].role;

  it('refuses to leave the organization without an owner', async () => {
    const demote = await role(m.owner, ownerId, 'admin');
    expect(demote.status).toBe(409);
    expect(demote.text).toContain('Owner is the only owner: make someone else an owner before you change their role');
    const remove = await m.owner.post('/people/remove', { csrf: await csrfOf(m.owner), person_id: ownerId, confirm: 'yes' });
    expect(remove.status).toBe(409);
    expect(remove.text).toContain('Owner is the only owner: make someone else an owner before you remove them');
    expect(await roleOf(ownerId)).toBe('owner');
  });

  it('lets an owner make an admin, and an admin manage members and admins but never owners', async () => {
    const ada = await m.addPerson({ email: 'ada@example.com', name: 'Ada Admin' });
    const made = await role(m.owner, ada.id, 'admin');
    expect(made.status).toBe(303);
    expect(made.headers.get('location')).toBe('/people?done=role');
    const [entry] = await m.activity('person.role_changed');
    expect(entry).toMatchObject({ person_id: ownerId, subject: ada.id, summary: "changed Ada Admin's role from member to admin", details: { from: 'member', to: 'admin' } });
    // The role she already has changes nothing, and the page says so.
    const again = await role(m.owner, ada.id, 'admin');
    expect(again.headers.get('location')).toBe('/people?done=role_kept');
    expect((await m.owner.get('/people?done=role_kept')).text).toContain('Nothing to change: they already have that role.');
    expect(await m.activity('person.role_changed')).toHaveLength(1);

    const mo = await m.addPerson({ email: 'mo@example.com', name: 'Mo Member' });
    expect((await role(ada.browser, mo.id, 'admin')).status).toBe(303);
    expect((await role(ada.browser, mo.id, 'member')).status).toBe(303);
    const toOwner = await role(ada.browser, mo.id, 'owner');
    expect(toOwner.status).toBe(403);
    expect(toOwner.text).toContain('as an admin you cannot make or change an owner: ask an owner');
    const demoteOwner = await role(ada.browser, ownerId, 'member');
    expect(demoteOwner.status).toBe(403);
    // Nor does she "keep" an owner an owner: the refusal comes before the comparison.
    expect((await role(ada.browser, ownerId, 'owner')).status).toBe(403);
    const removeOwner = await ada.browser.post('/people/remove', { csrf: await csrfOf(ada.browser), person_id: ownerId, confirm: 'yes' });
    expect(removeOwner.status).toBe(403);
    const inviteOwner = await m.invite(ada.browser, { email: 'olive@example.com', name: 'Olive', role: 'owner' });
    expect(inviteOwner.status).toBe(403);
    expect([await roleOf(mo.id), await roleOf(ownerId)]).toEqual(['member', 'owner']);
    // The page offers an admin only what they may do.
    const page = await ada.browser.get('/people');
    expect(page.text).toContain('Only an owner changes an owner.');
    expect(page.text).not.toContain('<option value="owner"');
  });

  it('lets the last owner step down once another owner exists', async () => {
    const oz = await m.addPerson({ email: 'oz@example.com', name: 'Oz Owner' });
    expect((await role(m.owner, oz.id, 'owner')).status).toBe(303);
    expect((await role(m.owner, ownerId, 'admin')).status).toBe(303);
    expect(await roleOf(ownerId)).toBe('admin');
    const back = await role(oz.browser, ownerId, 'owner');
    expect(back.status).toBe(303);
  });

  it('lets an owner or admin correct another person’s name, recorded, refusing a bad name and an admin renaming an owner', async () => {
    const rename = async (by: ManageOrg['owner'], personId: string, name: string) =>
      by.post('/people/name', { csrf: await csrfOf(by), person_id: personId, name });
    const nameOf = async (personId: string) =>
      (await m.org.service.database.rows<{ name: string }>(sql`SELECT name FROM people WHERE id = ${personId}`))[0].name;
    const nia = await m.addPerson({ email: 'nia@example.com', name: 'Nia Typo' });
    const page = await m.owner.get('/people');
    expect(page.text).toContain(`<label for="name-${nia.id}">New name for Nia Typo</label>`);
    const done = await rename(m.owner, nia.id, '  Nia Tapo ');
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/people?done=renamed');
    expect((await m.owner.get('/people?done=renamed')).text).toContain('The name was changed.');
    expect(await nameOf(nia.id)).toBe('Nia Tapo');
    const entries = await m.activity('person.renamed');
    expect(entries.at(-1)).toMatchObject({ person_id: ownerId, subject: nia.id, summary: 'changed the name of “Nia Typo” to “Nia Tapo”', details: { from: 'Nia Typo', to: 'Nia Tapo' } });
    // Nia's own pages read the new name at once.
    expect((await nia.browser.get('/account')).text).toContain('value="Nia Tapo"');
    const same = await rename(m.owner, nia.id, 'Nia Tapo');
    expect(same.headers.get('location')).toBe('/people?done=name_kept');
    expect((await m.owner.get('/people?done=name_kept')).text).toContain('Nothing to change: that is already their name.');
    expect(await m.activity('person.renamed')).toHaveLength(entries.length);

    for (const bad of ['', 'x'.repeat(201), 'Nia\u202Eevil', 'two\nlines']) {
      const refused = await rename(m.owner, nia.id, bad);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
    }
    const admin = await m.addPerson({ email: 'abe@example.com', name: 'Abe Admin' });
    expect((await role(m.owner, admin.id, 'admin')).status).toBe(303);
    expect((await rename(admin.browser, nia.id, 'Nia by Abe')).status).toBe(303);
    const owners = await m.org.service.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE role = 'owner' AND status = 'active'`);
    const forOwner = await rename(admin.browser, owners[0].id, 'Renamed owner');
    expect(forOwner.status).toBe(403);
    expect(await nameOf(owners[0].id)).not.toBe('Renamed owner');
    expect((await rename(m.owner, 'per_doesnotexist', 'Nobody')).status).toBe(404);
    expect(await nameOf(nia.id)).toBe('Nia by Abe');
    expect(await m.activity('person.renamed')).toHaveLength(entries.length + 1);
  });

  it("refuses to change a person the organization file declares, and shows no controls for them", async () => {
    const fay = await m.addPerson({ email: 'fay@example.com', name: 'Fay File' });
    await m.org.service.database.rows(sql`UPDATE people SET managed_by = 'file' WHERE id = ${fay.id}`);
    const changed = await role(m.owner, fay.id, 'admin');
    expect(changed.status).toBe(409);
    expect(changed.text).toContain('Fay File is managed by the organization file (org.yaml): change it there and apply the file again (npx atrium org apply)');
    const removed = await m.owner.post('/people/remove', { csrf: await csrfOf(m.owner), person_id: fay.id, confirm: 'yes' });
    expect(removed.status).toBe(409);
    const renamed = await m.owner.post('/people/name', { csrf: await csrfOf(m.owner), person_id: fay.id, name: 'Fay Other' });
    expect(renamed.status).toBe(409);
    const page = await m.owner.get('/people');
    const row = page.text.slice(page.text.indexOf('Fay File'), page.text.indexOf('</tr>', page.text.indexOf('Fay File')));
    expect(row).toContain('from org.yaml');
    expect(row).not.toContain('Change role');
    expect(row).not.toContain('Rename');
    expect(await roleOf(fay.id)).toBe('member');
  });
});
