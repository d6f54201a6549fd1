/**
 * Standing rules from the console (issue 20 item 1, DESIGN 4.4): an owner creates, edits, enforces and deletes a
 * rule on /rules and the gate applies it to a real `execute_capability` at once; a shadow rule shows how often it
 * would have fired; the form is checked by the organization file's own rule schema (400, nothing written); the
 * file's rules carry their badge and are refused (409).
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { csrfOf, startManageOrg, type ManageOrg } from '../helpers/people-org.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';

describe.each(engines)('standing rules from the console on %s', (engine) => {
  let m: ManageOrg;
  let client: OrgMcp;
  beforeAll(async () => {
    m = await startManageOrg(engine);
    client = await connectOrgMcp(m.org, { scopes: ['integrations:read', 'integrations:act'], clientName: 'Rule tester' });
  });
  afterAll(async () => {
    await client?.close();
    await m?.close();
  });

  const notify = (text: string) =>
    client.callOk('execute_capability', { capability_id: m.capabilityId, input: { text }, space_id: m.spaces.general, wait_seconds: 10 });
  const rule = (form: Record<string, string | string[]>) => ({ name: 'Quiet console', capability: 'notify_team', then: 'deny', mode: 'enforce', ...form });
  const post = async (path: string, form: Record<string, string | string[]> = {}) => m.owner.post(path, { csrf: await csrfOf(m.owner), ...form });
  const ruleCount = async () => (await m.org.service.database.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM standing_rules`))[0].n;

  it('applies a console rule to real executions as it is created, shadowed, enforced and deleted', async () => {
    expect(await notify('before any rule')).toMatchObject({ status: 'succeeded' });

    const created = await post('/rules/standing', rule({}));
    expect(created.status).toBe(303);
    expect(created.headers.get('location')).toBe('/rules?done=created');
    const [stored] = await m.org.service.database.rows<{ id: string; managed_by: string; when: unknown }>(
      sql`SELECT id, managed_by, "when" FROM standing_rules WHERE name = 'Quiet console'`,
    );
    expect(stored).toMatchObject({ managed_by: 'console', when: { capability: ['notify_team'] } });
    expect(await notify('denied')).toMatchObject({ status: 'failed', error: { code: 'denied_by_rule', message: 'rule "Quiet console" says deny' } });
    expect(m.receiver.calls).toHaveLength(1);

    // The page lists it after the file's rule, the gate's order, with its controls.
    const page = await m.owner.get(created.headers.get('location')!);
    expect(page.text).toContain('The rule was created.');
    expect(page.text.indexOf('File rule')).toBeLessThan(page.text.indexOf('Quiet console'));
    expect(page.text).toContain(`/rules/standing/${stored.id}/edit`);

    const edit = await m.owner.get(`/rules/standing/${stored.id}/edit`);
    expect(edit.status).toBe(200);
    expect(edit.text).toContain('value="notify_team"');
    const shadowed = await post(`/rules/standing/${stored.id}`, rule({ mode: 'shadow' }));
    expect(shadowed.status).toBe(303);
    expect(await notify('shadowed once')).toMatchObject({ status: 'succeeded' });
    expect(await notify('shadowed twice')).toMatchObject({ status: 'succeeded' });
    const counted = await m.owner.get('/rules');
    expect(counted.text).toContain('shadow: would have fired 2 times in the last 30 days');
    expect(counted.text).toContain(`aria-label="Enforce Quiet console"`);

    const enforced = await post(`/rules/standing/${stored.id}/enforce`);
    expect(enforced.status).toBe(303);
    expect(enforced.headers.get('location')).toBe('/rules?done=enforced');
    expect(await notify('enforced')).toMatchObject({ status: 'failed', error: { code: 'denied_by_rule' } });

    // Delete asks first and changes nothing; the confirmed form deletes.
    const asked = await post(`/rules/standing/${stored.id}/delete`);
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('<h1>Delete the rule Quiet console?</h1>');
    expect(asked.text).toContain('The gate stops applying it from the next action on');
    expect(await notify('asked to delete')).toMatchObject({ status: 'failed', error: { code: 'denied_by_rule' } });
    expect((await post('/rules/standing/rul_missing/delete')).status).toBe(404);
    const deleted = await post(`/rules/standing/${stored.id}/delete`, { confirm: 'yes' });
    expect(deleted.status).toBe(303);
    expect(await notify('after the rule')).toMatchObject({ status: 'succeeded' });
    expect((await m.owner.get('/rules')).text).not.toContain('Quiet console');

    for (const [kind, summary] of [
      ['rule.created', 'created the rule Quiet console'],
      ['rule.updated', 'changed the rule Quiet console'],
      ['rule.enforced', 'switched the rule Quiet console from shadow to enforced'],
      ['rule.deleted', 'deleted the rule Quiet console'],
    ]) {
      const [entry] = await m.activity(kind);
      expect(entry, kind).toMatchObject({ subject: stored.id, summary });
      expect(entry.person_id, kind).not.toBeNull();
    }
  });

  it('checks the form with the organization file rule schema: 400 with the reason, nothing written', async () => {
    const before = await ruleCount();
    const refusals: Array<[Record<string, string | string[]>, string]> = [
      [{ hours: '09:00-17:00' }, 'when.timezone: weekdays and hours need a timezone'],
      [{ weekdays: ['sat'], timezone: 'Mars/Olympus' }, 'when.timezone: must be an IANA time zone name such as Europe/Berlin'],
      [{ approvals: '3' }, 'approvals: approvals goes with then: require_approval only'],
      [{ then: 'require_approval', approvals: '1' }, 'approvals: Too small'],
      [{ input: '{"path": "/amount", "op": "gt"' }, 'invalid arguments: when.input: is not JSON'],
      [{ input: '{"path": "amount", "op": "gt", "value": 1}' }, 'when.input'],
      [{ capability: 'Not A Key' }, 'when.capability'],
      [{ then: 'maybe' }, 'then:'],
      [{ name: '' }, 'name:'],
      [{ name: 'nul\u0000' }, 'must not contain a NUL character'],
    ];
    for (const [form, message] of refusals) {
      const answer = await post('/rules/standing', rule(form));
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.text, JSON.stringify(form)).toContain(message);
    }
    expect(await ruleCount()).toBe(before);

    const twoPeople = await post('/rules/standing', rule({ name: 'Two people for big notices', then: 'require_approval', approvals: '2', input: '[{"path": "/text", "op": "eq", "value": "big"}]' }));
    expect(twoPeople.status).toBe(303);
    const [stored] = await m.org.service.database.rows(sql`SELECT approvals, "when" FROM standing_rules WHERE name = 'Two people for big notices'`);
    expect(stored).toEqual({ approvals: 2, when: { capability: ['notify_team'], input: [{ path: '/text', op: 'eq', value: 'big' }] } });
    expect((await m.owner.get('/rules')).text).toContain('by 2 different people');
  });

  it("marks the organization file's rules and refuses to change them", async () => {
    const [file] = await m.org.service.database.rows<{ id: string }>(sql`SELECT id FROM standing_rules WHERE name = 'File rule'`);
    // `org apply` marks what the file declares; here the test marks the file's rule itself.
    await m.org.service.database.rows(sql`UPDATE standing_rules SET managed_by = 'file' WHERE id = ${file.id}`);
    const page = await m.owner.get('/rules');
    const row = page.text.slice(page.text.indexOf('File rule'), page.text.indexOf('</tr>', page.text.indexOf('File rule')));
    expect(row).toContain('from org.yaml');
    expect(row).toContain('Change it in org.yaml');
    expect(row).not.toContain('Delete');
    const message = 'The rule File rule is managed by the organization file (org.yaml): change it there and apply the file again (npx atrium org apply)';
    for (const [path, extra] of [
      [`/rules/standing/${file.id}`, {}],
      [`/rules/standing/${file.id}/delete`, {}],
      [`/rules/standing/${file.id}/delete`, { confirm: 'yes' }],
      [`/rules/standing/${file.id}/enforce`, {}],
    ] as const) {
      const answer = await post(path, { ...rule({}), ...extra });
      expect(answer.status, path).toBe(409);
      expect(answer.text, path).toContain(message);
    }
    const edit = await m.owner.get(`/rules/standing/${file.id}/edit`);
    expect(edit.status).toBe(409);
    expect(await m.org.service.database.rows(sql`SELECT name, "then" FROM standing_rules WHERE id = ${file.id}`)).toEqual([{ name: 'File rule', then: 'deny' }]);
  });
});
