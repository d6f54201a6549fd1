/**
 * DESIGN 6: several org processes on one PostgreSQL database, no sticky sessions. A browser session, a form's
 * CSRF token and an MCP session made on one process are honoured by another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresUrl, testDatabase, type TestDatabase } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient, openMcpSession, postMcp, registerClient, startAuthorization } from '../helpers/oauth-flow.js';
import { Browserless } from '../helpers/web-client.js';

describe.runIf(postgresUrl)('two org processes on one PostgreSQL database', () => {
  let database: TestDatabase;
  let a: TestOrg;
  let b: TestOrg;
  beforeAll(async () => {
    database = testDatabase('postgres');
    a = await startOrg('postgres', { database });
    b = await startOrg('postgres', { database, config: { publicUrl: a.url, authPublicUrl: a.url } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await database.drop();
  });

  it('a sign-in and a CSRF token from one process are valid on the other', async () => {
    const onA = new Browserless(a.url);
    expect((await onA.signIn(OWNER.email, OWNER.password)).status).toBe(303);
    const { consentPath } = await startAuthorization(a, await registerClient(a), ['task:read']);
    const page = await onA.get(consentPath);
    // Same cookies, other process: still signed in, and the form answered there is accepted.
    const onB = onA.at(b.url);
    expect((await onB.get('/connections')).status).toBe(200);
    const answered = await onB.post('/consent', { csrf: onA.hidden(page.text, 'csrf'), request: onA.hidden(page.text, 'request'), scope: ['task:read'], decision: 'allow' });
    expect(answered.status).toBe(303);
    expect(new URL(answered.headers.get('location')!).searchParams.get('code')).toBeTruthy();
  });

  it('an MCP session opened on one process continues on the other with the same token', async () => {
    const { accessToken } = await connectClient(a);
    const headers = await openMcpSession(a, accessToken);
    const called = await postMcp(b, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'service_context', arguments: {} } }, headers);
    expect(called.status).toBe(200);
    expect(JSON.parse(called.json.result.content[0].text).person.email).toBe(OWNER.email);
  });
});
