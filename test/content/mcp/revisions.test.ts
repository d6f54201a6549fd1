/**
 * DESIGN 4.9: the content server keeps `2025-03-26` and answers `2025-06-18`, `2025-11-25` and `2026-07-28` to
 * the clients that ask for them, with the official SDK client at each revision; and the 2026-07-28 rules (no
 * session; envelope, headers and revision checked) spoken as raw HTTP.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/databases.js';
import { startContent, type TestContent } from '../../helpers/content.js';
import { BEARER, callError, callOk, initializeMessage, post, TOOL_NAMES } from '../../helpers/content-mcp-client.js';
import { connectAt, discoverResult, MODERN, modernRequest } from '../../helpers/mcp-revisions.js';

describe.each(engines)('content MCP revisions on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    content = await startContent(engine);
  });
  afterAll(() => content.close());

  describe.each(['2025-03-26', '2025-06-18', '2025-11-25', MODERN])('an SDK client speaking %s', (revision) => {
    const agent = `agent-${revision}`;

    it('is answered at that revision, lists the 19 tools, writes as its client name and gets catalogued errors', async () => {
      const { client, close } = await connectAt(`${content.url}/mcp`, BEARER, revision, agent);
      try {
        expect(client.getNegotiatedProtocolVersion()).toBe(revision);
        expect(client.getServerVersion()).toMatchObject({ name: 'atrium-content', version: '1.0.0' });
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());

        const item = await callOk(client, 'create_roadmap_item', { title: `Roadmap item for ${revision}` });
        const log = await callOk(client, 'get_activity_log', { limit: 1 });
        expect(log.entries[0]).toMatchObject({ resource_id: item.slug, actor_id: agent, actor_type: 'agent' });

        const missing = await callError(client, 'get_roadmap_item', { slug: 'no-such-item' });
        expect(missing.code).toBe('not_found');
      } finally {
        await close();
      }
    });
  });

  it('answers 2026-07-28 without a session: no Mcp-Session-Id and no row in mcp_sessions', async () => {
    const before = await sessionCount();
    const { body, headers } = modernRequest('tools/list');
    const response = await post(content.url, body, headers);
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    expect(response.json.result.tools).toHaveLength(19);
    expect(await sessionCount()).toBe(before);
  });

  it('answers server/discover with the modern revision and the server', async () => {
    const { body, headers } = modernRequest('server/discover');
    const response = await post(content.url, body, headers);
    expect(response.status).toBe(200);
    expect(response.json.result).toMatchObject(discoverResult('atrium-content'));
  });

  it('refuses a 2026-07-28 request without a bearer secret with 401, as every revision', async () => {
    const { body, headers } = modernRequest('tools/list');
    const response = await post(content.url, body, { ...headers, authorization: 'Bearer wrong' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('refuses a revision it does not serve, naming the ones it does', async () => {
    const { body, headers } = modernRequest('tools/list', {}, { revision: '2027-01-01' });
    const response = await post(content.url, body, headers);
    expect(response.status).toBe(400);
    expect(response.json.error).toMatchObject({ code: -32022, data: { supported: [MODERN], requested: '2027-01-01' } });
  });

  it('refuses a modern MCP-Protocol-Version header on a request without the envelope', async () => {
    const response = await post(content.url, { jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} }, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ id: 4, error: { code: -32602 } });
  });

  it('refuses a header naming another method than the body', async () => {
    const { body, headers } = modernRequest('tools/list');
    const response = await post(content.url, body, { ...headers, 'mcp-method': 'tools/call' });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe(-32020);
  });

  it('refuses a header naming another tool than the body', async () => {
    const { body, headers } = modernRequest('tools/call', { name: 'list_blog_posts', arguments: {} });
    const response = await post(content.url, body, { ...headers, 'mcp-name': 'delete_blog_post' });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe(-32020);
  });

  it('refuses a batch holding a 2026-07-28 request', async () => {
    const { body, headers } = modernRequest('tools/list');
    const response = await post(content.url, [body, { ...body, id: 2 }], headers);
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe(-32600);
  });

  it('still answers an unknown 2025 version with 2025-03-26', async () => {
    const response = await post(content.url, initializeMessage('2024-11-05'));
    expect(response.json.result.protocolVersion).toBe('2025-03-26');
  });

  async function sessionCount(): Promise<number> {
    const [row] = await content.service.ctx.database.rows<{ count: number }>(sql`SELECT count(*) AS count FROM mcp_sessions`);
    return Number(row.count);
  }
});
