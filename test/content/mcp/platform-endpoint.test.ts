/**
 * The generic MCP endpoint of src/platform/mcp with the options the content server does not use but an
 * OAuth-protected server (the org MCP endpoint) needs: sessions bound to a principal, the principal in
 * handlers, and an authentication refusal carrying its own challenge header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/platform/errors.js';
import { openDatabase, type Database } from '../../../src/platform/database.js';
import { createHttpServer, type HttpServer } from '../../../src/platform/http.js';
import { registerMcpEndpoint } from '../../../src/platform/mcp/index.js';
import { engines, testDatabase, type TestDatabase } from '../../helpers/databases.js';
import { initializeMessage, read } from '../../helpers/content-mcp-client.js';

interface Person {
  name: string;
  scopes: string[];
}
const PEOPLE: Record<string, Person> = {
  'alice-token': { name: 'alice', scopes: ['admin'] },
  'bob-token': { name: 'bob', scopes: [] },
};

describe.each(engines)('platform MCP endpoint options on %s', (engine) => {
  let app: HttpServer;
  let database: Database;
  let testDb: TestDatabase;
  let url: string;

  beforeAll(async () => {
    testDb = testDatabase(engine);
    database = await openDatabase(testDb.config);
    app = createHttpServer({ service: 'test', logLevel: 'silent' });
    registerMcpEndpoint<Person>(app, {
      path: '/mcp',
      db: database.db,
      sessionScope: 'test',
      serverInfo: { name: 'test-server', version: '0.0.1' },
      capabilities: { tools: {} },
      protocolVersions: ['2025-06-18'],
      hosts: { publicUrls: [], bindHost: '127.0.0.1' },
      authenticate(request, reply) {
        const person = PEOPLE[(request.headers.authorization ?? '').replace(/^Bearer /, '')];
        if (!person) {
          reply.header('www-authenticate', 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"');
          throw new AppError('unauthorized', 401, 'token missing or invalid');
        }
        return person;
      },
      principalId: (person) => person.name,
      installHandlers(server, { principal }) {
        server.setRequestHandler('tools/list', () => ({ tools: [] }));
        server.setRequestHandler('tools/call', () => ({
          content: [{ type: 'text', text: JSON.stringify({ principal: principal.name, scopes: principal.scopes }) }],
        }));
      },
    });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app.close();
    await database.close();
    await testDb.drop();
  });

  async function post(token: string, body: unknown, session?: string) {
    const response = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
        ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
      },
      body: JSON.stringify(body),
    });
    return read(response);
  }
  const openSession = async (token: string) => (await post(token, initializeMessage('2025-06-18'))).headers.get('mcp-session-id')!;
  const callTool = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'anything', arguments: {} } };

  it('answers the pinned version and keeps the principal with the session', async () => {
    const init = await post('alice-token', initializeMessage('2025-11-25'));
    expect(init.json.result.protocolVersion).toBe('2025-06-18');
    const session = init.headers.get('mcp-session-id')!;
    const rows = await database.rows<{ principal: string; server: string }>(
      (await import('drizzle-orm')).sql`SELECT principal, server FROM mcp_sessions WHERE id = ${session}`,
    );
    expect(rows).toEqual([{ principal: 'alice', server: 'test' }]);
  });

  it('hands the principal to handlers', async () => {
    const session = await openSession('alice-token');
    const response = await post('alice-token', callTool, session);
    expect(JSON.parse(response.json.result.content[0].text)).toEqual({ principal: 'alice', scopes: ['admin'] });
  });

  it("refuses another principal's session with 404", async () => {
    const session = await openSession('alice-token');
    expect((await post('bob-token', { jsonrpc: '2.0', id: 1, method: 'ping' }, session)).status).toBe(404);
  });

  it('sends the challenge header authenticate sets with its 401', async () => {
    const response = await post('nobody', initializeMessage('2025-06-18'));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('resource_metadata=');
  });
});
