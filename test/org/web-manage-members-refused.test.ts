/**
 * Members do not manage (issue 20 item 1): their pages show no management controls, and every management POST is
 * 403 whatever it carries — valid input or not — with nothing written.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { csrfOf, startManageOrg, type ManageOrg } from '../helpers/people-org.js';
import type { Browserless } from '../helpers/web-client.js';

describe.each(engines)('a member and the management forms on %s', (engine) => {
  let m: ManageOrg;
  let member: Browserless;
  let ruleId: string;
  let ownerId: string;
  beforeAll(async () => {
    m = await startManageOrg(engine);
    ({ browser: member } = await m.addPerson({ email: 'max@example.com', name: 'Max Member', spaceIds: [m.spaces.general] }));
    const db = m.org.service.database;
    [{ id: ruleId }] = await db.rows<{ id: string }>(sql`SELECT id FROM standing_rules`);
    [{ id: ownerId }] = await db.rows<{ id: string }>(sql`SELECT id FROM people WHERE role = 'owner'`);
  });
  afterAll(async () => {
    await m?.close();
  });

  it('shows a member no management controls', async () => {
    const people = await member.get('/people');
    expect(people.status).toBe(200);
    for (const control of ['Invite someone', 'Create a space', 'Change role', 'Remove', 'Waiting invitations']) expect(people.text).not.toContain(control);
    const rules = await member.get('/rules');
    expect(rules.status).toBe(200);
    expect(rules.text).toContain('File rule');
    for (const control of ['New rule', 'Enforce', 'Delete', '/edit']) expect(rules.text).not.toContain(control);
    expect((await member.get('/rules/standing/new')).status).toBe(403);
    expect((await member.get(`/rules/standing/${ruleId}/edit`)).status).toBe(403);
  });

  it('refuses every management POST with 403 and writes nothing', async () => {
    const db = m.org.service.database;
    const count = async () =>
      db.rows(sql`SELECT (SELECT count(*)::int FROM invitations) AS invitations, (SELECT count(*)::int FROM spaces) AS spaces,
        (SELECT count(*)::int FROM standing_rules) AS rules, (SELECT count(*)::int FROM org_activity WHERE kind LIKE 'rule.%' OR kind LIKE 'space.%' OR kind IN ('person.role_changed', 'person.renamed')) AS changes,
        (SELECT string_agg(name, ',' ORDER BY id) FROM people) AS names`);
    const before = await count();
    const csrf = await csrfOf(member);
    const rule = { name: 'Sneaky', then: 'allow', mode: 'enforce', capability: 'notify_team' };
    const posts: Array<[string, Record<string, string>]> = [
      ['/people/invite', { email: 'friend@example.com', name: 'Friend', role: 'member' }],
      ['/people/invite', { email: 'not an email' }],
      ['/people/invitations/withdraw', { invitation_id: 'inv_x' }],
      ['/people/role', { person_id: ownerId, role: 'member' }],
      ['/people/name', { person_id: ownerId, name: 'Renamed by a member' }],
      ['/people/remove', { person_id: ownerId, confirm: 'yes' }],
      ['/people/spaces', { key: 'mine', name: 'Mine' }],
      ['/people/spaces/rename', { space_id: m.spaces.general, name: 'Renamed' }],
      ['/people/spaces/members/add', { space_id: m.spaces.ops, person_id: ownerId }],
      ['/people/spaces/members/remove', { space_id: m.spaces.general, person_id: ownerId }],
      ['/rules/standing', rule],
      [`/rules/standing/${ruleId}`, rule],
      [`/rules/standing/${ruleId}/delete`, {}],
      [`/rules/standing/${ruleId}/delete`, { confirm: 'yes' }],
      [`/rules/standing/${ruleId}/enforce`, {}],
    ];
    for (const [path, form] of posts) {
      const answer = await member.post(path, { csrf, ...form });
      expect(answer.status, path).toBe(403);
      expect(answer.text, path).toContain('only owners and admins manage the organization');
    }
    expect(await count()).toEqual(before);
  });
});
