/**
 * Removing a person (issue 20 item 1, DESIGN 4.6): after a confirmation, at once, their MCP token stops working,
 * their refresh token is refused, their web sessions end, they leave every space, and signing in gets the usual
 * wrong-credentials answer. They are listed nowhere people are picked, their name stays on old records, and
 * inviting them again brings the same person back.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { csrfOf, startManageOrg, type ManageOrg } from '../helpers/people-org.js';
import { connectOrgMcp } from '../helpers/org-mcp.js';
import { initializeMessage, postMcp, REDIRECT_URI } from '../helpers/oauth-flow.js';
import { Browserless } from '../helpers/web-client.js';

describe.each(engines)('removing a person on %s', (engine) => {
  let m: ManageOrg;
  beforeAll(async () => {
    m = await startManageOrg(engine);
  });
  afterAll(async () => {
    await m?.close();
  });

  it('revokes their tokens and sessions at once, and they can no longer sign in', async () => {
    const rae = await m.addPerson({ email: 'rae@example.com', name: 'Rae Removed', spaceIds: [m.spaces.general, m.spaces.ops] });
    const client = await connectOrgMcp(m.org, { email: 'rae@example.com', password: rae.password, clientName: 'Rae laptop' });
    const context = await client.callOk('service_context');
    expect(context.person.email).toBe('rae@example.com');
    const bearer = { authorization: `Bearer ${client.connected.accessToken}` };
    expect((await postMcp(m.org, initializeMessage, bearer)).status).toBe(200);
    expect((await rae.browser.get('/people')).status).toBe(200);

    // The first POST asks to confirm and changes nothing.
    const ask = await m.owner.post('/people/remove', { csrf: await csrfOf(m.owner), person_id: rae.id });
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('Remove Rae Removed?');
    expect((await postMcp(m.org, initializeMessage, bearer)).status).toBe(200);
    const removed = await m.owner.post('/people/remove', { csrf: await csrfOf(m.owner), person_id: rae.id, confirm: 'yes' });
    expect(removed.status).toBe(303);
    expect(removed.headers.get('location')).toBe('/people?done=removed');

    const refused = await postMcp(m.org, initializeMessage, bearer);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const refresh = await m.org.request('POST', '/oauth/token', {
      form: { grant_type: 'refresh_token', refresh_token: client.connected.refreshToken, client_id: client.connected.clientId, redirect_uri: REDIRECT_URI },
    });
    expect(refresh.status).toBe(400);
    expect(refresh.body.error).toBe('invalid_grant');
    await client.close();

    const session = await rae.browser.get('/people');
    expect(session.status).toBe(303);
    expect(session.headers.get('location')).toMatch(/^\/signin/);
    const again = await new Browserless(m.org.url).signIn('rae@example.com', rae.password);
    expect(again.status).toBe(200);
    expect(again.text).toContain('The email or password is not right.');

    const db = m.org.service.database;
    expect(await db.rows(sql`SELECT space_id FROM space_members WHERE person_id = ${rae.id}`)).toEqual([]);
    expect(await db.rows(sql`SELECT status FROM people WHERE id = ${rae.id}`)).toEqual([{ status: 'removed' }]);
    const [entry] = await m.activity('person.removed');
    // Two sessions: the one joining started, and the one Rae consented to the client in.
    expect(entry).toMatchObject({ subject: rae.id, summary: 'removed Rae Removed from the organization', details: { sessions_ended: 2, grants_revoked: 1 } });
    expect(entry.details.spaces_left.sort()).toEqual([m.spaces.general, m.spaces.ops].sort());

    // Gone from the lists that pick people, still named on what they did.
    const people = await m.owner.get(`/people?space=${m.spaces.general}`);
    expect(people.text).not.toContain('rae@example.com');
    const activity = await m.owner.get('/activity?kind=person.joined');
    expect(activity.text).toContain('Rae Removed');
  });

  it('brings a removed person back as the same person when invited again', async () => {
    const sam = await m.addPerson({ email: 'sam@example.com', name: 'Sam Again' });
    await m.owner.post('/people/remove', { csrf: await csrfOf(m.owner), person_id: sam.id, confirm: 'yes' });
    const back = await m.addPerson({ email: 'sam@example.com', name: 'Sam Returned', role: 'admin', spaceIds: [m.spaces.ops] });
    expect(back.id).toBe(sam.id);
    const page = await back.browser.get('/people');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Sam Returned');
    const [joined] = (await m.activity('person.joined')).filter((entry) => entry.person_id === sam.id).slice(-1);
    expect(joined.summary).toBe('joined the organization as admin (invited back)');
  });
});
