/**
 * Issue 22 item 1, DESIGN 6: what each org process keeps in memory — verified tokens, MCP sessions, a person's
 * spaces and directory, search_memory pages, settled operations — is dropped on every process the moment the
 * change commits. On PostgreSQL two services share one database; on the embedded database one service plays
 * both parts (it cannot be shared), so the same rules are checked within one process. No test waits: each
 * reads right after the write answered (one polls an operation until a worker starts it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgTools } from '../../src/org/mcp/server.js';
import { completeOperation } from '../../src/org/operations/operations.js';
import { engines, testDatabase, type TestDatabase } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient, openMcpSession, postMcp } from '../helpers/oauth-flow.js';
import { ALL_SCOPES, openOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { startTool, testKind } from '../helpers/test-work.js';
import { signedInBrowserless } from '../helpers/web-client.js';

const serviceContext = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'service_context', arguments: {} } };

describe.each(engines)('org reads kept in memory, on %s', (engine) => {
  let database: TestDatabase;
  let a: TestOrg;
  let b: TestOrg;
  beforeAll(async () => {
    database = testDatabase(engine);
    const options = { database, mcpTools: [...orgTools, startTool], operationKinds: [testKind('test')] };
    a = await startOrg(engine, options);
    b = engine === 'postgres' ? await startOrg(engine, { ...options, config: { publicUrl: a.url, authPublicUrl: a.url } }) : a;
  });
  afterAll(async () => {
    if (b !== a) await b?.close();
    await a?.close();
    await database?.drop();
  });

  /** A client of the owner with every scope, with an SDK session on each process. */
  async function clientOnBoth(): Promise<{ onA: OrgMcp; onB: OrgMcp; accessToken: string; clientId: string }> {
    const connected = await connectClient(a, { scopes: ALL_SCOPES });
    return { onA: await openOrgMcp(a, connected), onB: await openOrgMcp(b, connected), accessToken: connected.accessToken, clientId: connected.clientId };
  }

  it('refuses a revoked access token on every process at once', async () => {
    const { accessToken, clientId } = await connectClient(a);
    const onA = await openMcpSession(a, accessToken);
    const onB = await openMcpSession(b, accessToken);
    // Both processes have verified the token, so both keep it.
    expect((await postMcp(a, serviceContext, onA)).status).toBe(200);
    expect((await postMcp(b, serviceContext, onB)).status).toBe(200);

    expect((await a.request('POST', '/oauth/revoke', { form: { token: accessToken, client_id: clientId } })).status).toBe(200);
    expect((await postMcp(a, serviceContext, onA)).status).toBe(401);
    expect((await postMcp(b, serviceContext, onB)).status).toBe(401);
  });

  it('refuses every token of a client the person disconnected, on every process at once', async () => {
    const { accessToken, clientId } = await connectClient(a);
    const session = await openMcpSession(b, accessToken);
    expect((await postMcp(b, serviceContext, session)).status).toBe(200);

    const browser = await signedInBrowserless(a.url, OWNER);
    const page = await browser.get('/connections');
    const answer = await browser.post('/connections/disconnect', { csrf: browser.hidden(page.text, 'csrf'), client_id: clientId });
    expect(answer.status).toBe(303);
    expect((await postMcp(b, serviceContext, session)).status).toBe(401);
    expect((await postMcp(a, serviceContext, session)).status).toBe(401);
  });

  it('refuses an ended MCP session on every process at once', async () => {
    const { accessToken } = await connectClient(a);
    const session = await openMcpSession(a, accessToken);
    expect((await postMcp(a, serviceContext, session)).status).toBe(200);
    expect((await postMcp(b, serviceContext, session)).status).toBe(200);

    const ended = await fetch(`${a.url}/mcp`, { method: 'DELETE', headers: session });
    expect(ended.status).toBe(200);
    expect((await postMcp(b, serviceContext, session)).status).toBe(404);
    expect((await postMcp(a, serviceContext, session)).status).toBe(404);
  });

  it('shows a new space membership in service_context on every process at once', async () => {
    const { onA, onB } = await clientOnBoth();
    const before = (await onB.callOk('service_context')).spaces.map((space: { key: string }) => space.key);
    expect(before).not.toContain('reads');
    expect((await onA.callOk('service_context')).spaces).toEqual((await onB.callOk('service_context')).spaces);

    const owner = await signedInBrowserless(a.url, OWNER);
    const csrf = owner.hidden((await owner.get('/people')).text, 'csrf');
    const created = await owner.post('/people/spaces', { csrf, key: 'reads', name: 'Reads' });
    const spaceId = new URL(created.headers.get('location')!, a.url).searchParams.get('space')!;
    const me = (await onA.callOk('service_context')).person.id;
    expect((await owner.post('/people/spaces/members/add', { csrf, space_id: spaceId, person_id: me })).status).toBe(303);

    for (const client of [onB, onA]) {
      expect((await client.callOk('service_context')).spaces.map((space: { key: string }) => space.key)).toContain('reads');
    }
    // The registry's space rule reads the same memory: the new space takes work at once.
    expect((await onB.callOk('search_memory', { query: 'nothing here yet', space_id: spaceId })).items).toEqual([]);
    await onA.close();
    await onB.close();
  });

  it('finds a memory item on every process the moment it is recorded', async () => {
    const { onA, onB } = await clientOnBoth();
    const spaceId = (await onA.callOk('service_context')).spaces[0].id;
    const search = { query: 'quarterly lighthouse' };
    expect((await onB.callOk('search_memory', search)).items).toEqual([]);
    expect((await onA.callOk('search_memory', search)).items).toEqual([]);

    const item = await onA.callOk('record_memory', { kind: 'fact', title: 'Quarterly lighthouse review', body: 'Every quarter.', space_id: spaceId });
    expect((await onB.callOk('search_memory', search)).items.map((found: { id: string }) => found.id)).toEqual([item.id]);
    expect((await onA.callOk('search_memory', search)).items.map((found: { id: string }) => found.id)).toEqual([item.id]);
    await onA.close();
    await onB.close();
  });

  it('shows an operation settled on one process to get_operation on the other', async () => {
    const { onA, onB } = await clientOnBoth();
    const spaceId = (await onA.callOk('service_context')).spaces[0].id;
    // `elsewhere`: the runner leaves it running, as work handed to an agent is.
    const started = await onA.callOk('test_start', { text: 'later', mode: 'elsewhere', space_id: spaceId, wait_seconds: 0 });
    // Not settled, so never kept: each read on b sees it queued until a worker starts it.
    let running = await onB.callOk('get_operation', { operation_id: started.operation_id });
    for (let attempt = 0; running.status === 'queued' && attempt < 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      running = await onB.callOk('get_operation', { operation_id: started.operation_id });
    }
    expect(running.status).toBe('running');

    await completeOperation(a.service.database.db, started.operation_id, { done: true });
    const settled = await onB.callOk('get_operation', { operation_id: started.operation_id });
    expect(settled).toMatchObject({ status: 'succeeded', result: { done: true } });
    expect(await onA.callOk('get_operation', { operation_id: started.operation_id })).toEqual(settled);
    // Settled, it can no longer change: kept, it reads the same.
    expect(await onB.callOk('get_operation', { operation_id: started.operation_id })).toEqual(settled);
    await onA.close();
    await onB.close();
  });
});
