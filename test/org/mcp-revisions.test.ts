/**
 * DESIGN 4.9: the org server answers `2025-06-18` as the contract asks and serves `2025-11-25` and `2026-07-28`
 * to the clients that ask for them, with tokens from the real OAuth flow and the official SDK client at each
 * revision; the 2026-07-28 request passes the same refusals as every other (401, 403 insufficient_scope); and
 * any process serves any request of each revision (two services on one PostgreSQL database).
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgTools } from '../../src/org/mcp/server.js';
import { engines, postgresUrl, testDatabase, type TestDatabase } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient, initializeMessage, openMcpSession, postMcp } from '../helpers/oauth-flow.js';
import { ALL_SCOPES } from '../helpers/org-mcp.js';
import { connectAt, discoverResult, MODERN, modernRequest } from '../helpers/mcp-revisions.js';

const REVISIONS = ['2025-06-18', '2025-11-25', MODERN];

describe.each(engines)('org MCP revisions on %s', (engine) => {
  let org: TestOrg;
  let bearer: Record<string, string>;
  beforeAll(async () => {
    org = await startOrg(engine);
    const { accessToken } = await connectClient(org, { scopes: ALL_SCOPES });
    bearer = { authorization: `Bearer ${accessToken}` };
  });
  afterAll(() => org.close());

  it.each(REVISIONS)('an SDK client speaking %s is answered at it: tools, a call and a catalogued error', async (revision) => {
    const { client, close } = await connectAt(`${org.url}/mcp`, bearer, revision, `client-${revision}`);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(revision);
      expect(client.getServerVersion()).toMatchObject({ name: 'atrium-org', version: '1.0.0' });
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(orgTools.map((tool) => tool.name).sort());

      const context = await client.callTool({ name: 'service_context', arguments: {} });
      expect(context.isError).toBeFalsy();
      expect(context.structuredContent).toMatchObject({ person: { email: 'owner@example.com' } });

      const missing = await client.callTool({ name: 'get_operation', arguments: { operation_id: 'op_doesnotexist' } });
      expect(missing.isError).toBe(true);
      expect(JSON.parse((missing.content[0] as { text: string }).text)).toMatchObject({ error: { code: 'not_found' } });
    } finally {
      await close();
    }
  });

  it('answers initialize for 2025-06-18 exactly as the contract: that revision, tools only, a session row', async () => {
    const response = await postMcp(org, initializeMessage, bearer);
    expect(response.status).toBe(200);
    expect(response.json.result).toEqual({
      protocolVersion: '2025-06-18',
      capabilities: { tools: {} },
      serverInfo: { name: 'atrium-org', version: '1.0.0' },
    });
    expect(await sessionVersion(response.headers.get('mcp-session-id')!)).toBe('2025-06-18');
  });

  it.each([
    ['2025-11-25', '2025-11-25'],
    ['2024-11-05', '2025-06-18'],
    ['2099-01-01', '2025-06-18'],
  ])('answers an initialize asking for %s with %s and keeps it with the session', async (asked, answered) => {
    const response = await postMcp(org, { ...initializeMessage, params: { ...initializeMessage.params, protocolVersion: asked } }, bearer);
    expect(response.json.result.protocolVersion).toBe(answered);
    expect(await sessionVersion(response.headers.get('mcp-session-id')!)).toBe(answered);
  });

  it('refuses a session request whose MCP-Protocol-Version names another revision than the session', async () => {
    const headers = await openMcpSession(org, bearer.authorization.slice('Bearer '.length));
    const response = await postMcp(org, { jsonrpc: '2.0', id: 2, method: 'ping' }, { ...headers, 'mcp-protocol-version': '2025-11-25' });
    expect(response.status).toBe(400);
    expect(response.json.error.message).toContain('Unsupported protocol version: 2025-11-25');
  });

  it('answers 2026-07-28 without a session and server/discover with its revision', async () => {
    const list = modernRequest('tools/list');
    const listed = await postMcp(org, list.body, { ...bearer, ...list.headers });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('mcp-session-id')).toBeNull();
    expect(listed.json.result.tools).toHaveLength(orgTools.length);

    const discover = modernRequest('server/discover');
    const discovered = await postMcp(org, discover.body, { ...bearer, ...discover.headers });
    expect(discovered.json.result).toMatchObject(discoverResult('atrium-org'));
  });

  it('refuses a 2026-07-28 request without a token with the same challenge as a 2025 one', async () => {
    const { body, headers } = modernRequest('tools/list');
    const modern = await postMcp(org, body, headers);
    const legacy = await postMcp(org, initializeMessage);
    expect(modern.status).toBe(401);
    expect(modern.headers.get('www-authenticate')).toBe(legacy.headers.get('www-authenticate'));
    expect(modern.text).toBe(legacy.text);
  });

  it('refuses a 2026-07-28 tools/call the token has no scope for with 403 insufficient_scope', async () => {
    const { accessToken } = await connectClient(org, { scopes: ['service:ask'] });
    const { body, headers } = modernRequest('tools/call', { name: 'search_memory', arguments: { query: 'x' } });
    const refused = await postMcp(org, body, { authorization: `Bearer ${accessToken}`, ...headers });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/);
    expect(refused.json).toMatchObject({ error: 'insufficient_scope', required_scope: 'memory:read' });
  });

  it('refuses a revision it does not serve with the supported list, and a body over 1 MiB with 413', async () => {
    const unknown = modernRequest('tools/list', {}, { revision: '2027-01-01' });
    const refused = await postMcp(org, unknown.body, { ...bearer, ...unknown.headers });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: -32022, data: { supported: [MODERN] } });

    const big = modernRequest('tools/call', { name: 'search_memory', arguments: { query: 'x'.repeat(1024 * 1024) } });
    expect((await postMcp(org, big.body, { ...bearer, ...big.headers })).status).toBe(413);
  });

  async function sessionVersion(id: string): Promise<string> {
    const [row] = await org.service.database.rows<{ protocol_version: string }>(sql`SELECT protocol_version FROM mcp_sessions WHERE id = ${id}`);
    return row.protocol_version;
  }
});

describe.skipIf(!postgresUrl)('org MCP revisions across two processes on one PostgreSQL', () => {
  let database: TestDatabase;
  let first: TestOrg;
  let second: TestOrg;
  let bearer: Record<string, string>;
  beforeAll(async () => {
    database = testDatabase('postgres');
    first = await startOrg('postgres', { database });
    second = await startOrg('postgres', { database, config: { publicUrl: first.url, authPublicUrl: first.url } });
    const { accessToken } = await connectClient(first, { scopes: ALL_SCOPES });
    bearer = { authorization: `Bearer ${accessToken}` };
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await database?.drop();
  });

  it.each(['2025-06-18', '2025-11-25'])('continues on the second process a %s session opened on the first', async (revision) => {
    const init = await postMcp(first, { ...initializeMessage, params: { ...initializeMessage.params, protocolVersion: revision } }, bearer);
    const headers = { ...bearer, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': revision };
    expect((await postMcp(second, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(202);
    const listed = await postMcp(second, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
    expect(listed.json.result.tools).toHaveLength(orgTools.length);
  });

  it('answers 2026-07-28 requests on either process with a token issued by the first', async () => {
    for (const org of [first, second]) {
      const { body, headers } = modernRequest('tools/call', { name: 'service_context', arguments: {} });
      const called = await postMcp(org, body, { ...bearer, ...headers });
      expect(called.status).toBe(200);
      expect(called.json.result.structuredContent).toMatchObject({ person: { email: 'owner@example.com' } });
    }
  });
});
