/**
 * The Streamable HTTP rules of the content MCP endpoint (2025-03-26 transport; spec 4.3; DESIGN 3, 5, 6),
 * spoken as raw HTTP so nothing is hidden by a client library.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/databases.js';
import { startContent, type TestContent } from '../../helpers/content.js';
import { ACCEPT_BOTH, BEARER, initializeMessage, openSession, post, read, sessionHeaders } from '../../helpers/content-mcp-client.js';

const ping = (id: number | string = 7) => ({ jsonrpc: '2.0', id, method: 'ping' });
const listTools = (id: number | string = 8) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });

describe.each(engines)('content MCP transport on %s', (engine) => {
  let content: TestContent;
  let url: string;
  beforeAll(async () => {
    content = await startContent(engine);
    url = content.url;
  });
  afterAll(() => content.close());

  describe('initialize', () => {
    it('answers 2025-03-26, names the server and issues a session id', async () => {
      const response = await post(url, initializeMessage('2025-03-26'));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('application/json');
      expect(response.headers.get('mcp-session-id')).toMatch(/^[\x21-\x7e]{32,}$/);
      expect(response.json).toMatchObject({
        jsonrpc: '2.0',
        id: 1,
        result: { protocolVersion: '2025-03-26', serverInfo: { name: 'atrium-content', version: '1.0.0' }, capabilities: { tools: {} } },
      });
    });

    // DESIGN 4.9: 2025-06-18 and 2025-11-25 are answered as asked (revisions.test.ts); other versions get the spec's.
    it.each(['2024-11-05', '2099-01-01'])('answers a client asking for %s with 2025-03-26, and the session carries on', async (asked) => {
      const response = await post(url, initializeMessage(asked));
      expect(response.status).toBe(200);
      expect(response.json.result.protocolVersion).toBe('2025-03-26');
      const session = response.headers.get('mcp-session-id')!;
      const tools = await post(url, listTools(), sessionHeaders(session));
      expect(tools.status).toBe(200);
      expect(tools.json.result.tools).toHaveLength(19);
    });

    it('initializes over SSE for a client accepting only text/event-stream', async () => {
      const response = await post(url, initializeMessage('2025-03-26', 'sse-init'), { accept: 'text/event-stream' });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      expect(response.headers.get('mcp-session-id')).toBeTruthy();
      expect(response.json).toMatchObject([{ id: 'sse-init', result: { protocolVersion: '2025-03-26' } }]);
    });

    it('answers notifications/initialized with 202 and no body', async () => {
      const init = await post(url, initializeMessage());
      const session = init.headers.get('mcp-session-id')!;
      const response = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': session });
      expect(response.status).toBe(202);
      expect(response.text).toBe('');
    });

    it('stores the session with the client name and negotiated version', async () => {
      const init = await post(url, initializeMessage('2024-11-05', 1, 'rows-agent'));
      const id = init.headers.get('mcp-session-id')!;
      const rows = await content.service.ctx.database.rows<{ server: string; protocol_version: string; client_name: string; ended_at: string | null }>(
        sqlSession(id),
      );
      expect(rows).toEqual([{ server: 'content', protocol_version: '2025-03-26', client_name: 'rows-agent', ended_at: null }]);
    });

    it('refuses a malformed initialize without creating a session', async () => {
      const response = await post(url, { jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: '2025-03-26' } });
      expect(response.status).toBe(400);
      expect(response.headers.get('mcp-session-id')).toBeNull();
      expect(response.json).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32602 } });
    });
  });

  describe('sessions', () => {
    it('refuses a request without Mcp-Session-Id with 400', async () => {
      const response = await post(url, ping());
      expect(response.status).toBe(400);
      expect(response.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
      expect(response.json.error.message).toContain('Mcp-Session-Id');
    });

    it('refuses an unknown session with 404', async () => {
      const response = await post(url, ping(), { 'mcp-session-id': 'no-such-session' });
      expect(response.status).toBe(404);
      expect(response.json).toMatchObject({ error: { code: -32001, message: 'Session not found' } });
    });

    it('answers requests of a live session', async () => {
      const session = await openSession(url);
      const response = await post(url, ping(42), sessionHeaders(session));
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ jsonrpc: '2.0', id: 42, result: {} });
    });

    it('ends a session on DELETE; later requests get 404', async () => {
      const session = await openSession(url);
      const deleted = await fetch(`${url}/mcp`, { method: 'DELETE', headers: { ...BEARER, ...sessionHeaders(session) } });
      expect(deleted.status).toBe(200);
      expect((await post(url, ping(), sessionHeaders(session))).status).toBe(404);
      const again = await fetch(`${url}/mcp`, { method: 'DELETE', headers: { ...BEARER, ...sessionHeaders(session) } });
      expect(again.status).toBe(404);
    });

    it('refuses DELETE without a session id with 400', async () => {
      const response = await fetch(`${url}/mcp`, { method: 'DELETE', headers: BEARER });
      expect(response.status).toBe(400);
    });

    it('refuses a protocol version header other than 2025-03-26 with 400', async () => {
      const session = await openSession(url);
      const response = await post(url, ping(), { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' });
      expect(response.status).toBe(400);
      expect(response.json.error.message).toContain('Unsupported protocol version');
    });

    it('refuses an initialize inside a batch', async () => {
      const response = await post(url, [initializeMessage(), ping()]);
      expect(response.status).toBe(400);
      expect(response.headers.get('mcp-session-id')).toBeNull();
    });
  });

  describe('Accept', () => {
    let session: string;
    beforeAll(async () => {
      session = await openSession(url);
    });

    it('answers one JSON body when both types are accepted', async () => {
      const response = await post(url, ping(1), { ...sessionHeaders(session), accept: ACCEPT_BOTH });
      expect(response.headers.get('content-type')).toContain('application/json');
      expect(response.json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    });

    it('answers JSON to a client accepting only application/json', async () => {
      const response = await post(url, ping(2), { ...sessionHeaders(session), accept: 'application/json' });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('application/json');
      expect(response.json).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    });

    it('streams SSE to a client accepting only text/event-stream', async () => {
      const response = await post(url, ping(3), { ...sessionHeaders(session), accept: 'text/event-stream' });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      expect(response.json).toEqual([{ jsonrpc: '2.0', id: 3, result: {} }]);
    });

    it('streams SSE when text/event-stream is preferred by q-value', async () => {
      const response = await post(url, listTools(4), { ...sessionHeaders(session), accept: 'application/json;q=0.5, text/event-stream' });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      expect(response.json[0].result.tools).toHaveLength(19);
    });

    it('answers a batch of requests in one SSE stream', async () => {
      const response = await post(url, [ping(5), listTools(6)], { ...sessionHeaders(session), accept: 'text/event-stream' });
      expect(response.status).toBe(200);
      expect((response.json as Array<{ id: number }>).map((message) => message.id).sort()).toEqual([5, 6]);
    });

    it('answers a batch of requests as one JSON array', async () => {
      const response = await post(url, [ping(5), ping(6)], sessionHeaders(session));
      expect(response.json).toEqual([
        { jsonrpc: '2.0', id: 5, result: {} },
        { jsonrpc: '2.0', id: 6, result: {} },
      ]);
    });

    it('refuses with 406 when neither type is acceptable', async () => {
      const response = await post(url, ping(), { ...sessionHeaders(session), accept: 'text/html' });
      expect(response.status).toBe(406);
    });

    it('opens a GET stream for server messages only to a client accepting text/event-stream', async () => {
      const refused = await fetch(`${url}/mcp`, { headers: { ...BEARER, ...sessionHeaders(session), accept: 'application/json' } });
      expect(refused.status).toBe(406);

      const controller = new AbortController();
      const response = await fetch(`${url}/mcp`, {
        headers: { ...BEARER, ...sessionHeaders(session), accept: 'text/event-stream' },
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(first.startsWith(':')).toBe(true);
      controller.abort();
    });

    it('closes open GET streams when the service shuts down, so draining does not wait for clients', async () => {
      const other = await startContent(engine);
      const id = await openSession(other.url);
      const response = await fetch(`${other.url}/mcp`, { headers: { ...BEARER, ...sessionHeaders(id), accept: 'text/event-stream' } });
      expect(response.status).toBe(200);
      const ended = response.text();
      const started = Date.now();
      await other.close();
      await ended;
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it('refuses a GET stream without a session', async () => {
      const response = await fetch(`${url}/mcp`, { headers: { ...BEARER, accept: 'text/event-stream' } });
      expect(response.status).toBe(400);
    });
  });

  describe('limits and malformed bodies', () => {
    it('refuses a batch longer than 25 with 413, running none of it', async () => {
      const session = await openSession(url);
      const batch = Array.from({ length: 26 }, (_, i) => ping(i));
      const response = await post(url, batch, sessionHeaders(session));
      expect(response.status).toBe(413);
      expect(response.json.error.code).toBe(-32600);
    });

    it('accepts a batch of exactly 25', async () => {
      const session = await openSession(url);
      const response = await post(url, Array.from({ length: 25 }, (_, i) => ping(i)), sessionHeaders(session));
      expect(response.status).toBe(200);
      expect(response.json).toHaveLength(25);
    });

    it('refuses a body over 1 MiB with 413', async () => {
      const session = await openSession(url);
      const big = { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { pad: 'x'.repeat(1024 * 1024) } } };
      const response = await post(url, big, sessionHeaders(session));
      expect(response.status).toBe(413);
    });

    it('answers unparsable JSON with a JSON-RPC parse error', async () => {
      const response = await post(url, '{"jsonrpc": "2.0", ');
      expect(response.status).toBe(400);
      expect(response.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
    });

    it('refuses a body that is not JSON with 415', async () => {
      const response = await post(url, 'ping', { 'content-type': 'text/plain' });
      expect(response.status).toBe(415);
    });

    it('answers an unknown method with a JSON-RPC method-not-found error', async () => {
      const session = await openSession(url);
      const response = await post(url, { jsonrpc: '2.0', id: 9, method: 'resources/list', params: {} }, sessionHeaders(session));
      expect(response.status).toBe(200);
      expect(response.json).toMatchObject({ id: 9, error: { code: -32601 } });
    });
  });

  describe('authentication', () => {
    it.each([
      ['no Authorization header', {}],
      ['a wrong secret', { authorization: 'Bearer wrong-secret-0123456789' }],
      ['another scheme', { authorization: 'Basic dGVzdDp0ZXN0' }],
    ])('refuses %s with 401 and a Bearer challenge', async (_label, auth) => {
      const response = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...auth },
        body: JSON.stringify(initializeMessage()),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(response.headers.get('mcp-session-id')).toBeNull();
      expect((await read(response)).json.error.code).toBe('unauthorized');
    });

    it('refuses GET and DELETE of a live session without the secret', async () => {
      const session = await openSession(url);
      for (const method of ['GET', 'DELETE']) {
        const response = await fetch(`${url}/mcp`, { method, headers: { ...sessionHeaders(session), accept: 'text/event-stream' } });
        expect(response.status, method).toBe(401);
      }
      expect((await post(url, ping(), sessionHeaders(session))).status).toBe(200);
    });
  });

  describe('DNS rebinding protection', () => {
    it.each(['POST', 'GET', 'DELETE'])('refuses %s with a foreign Host with 403', async (method) => {
      const response = await rawRequest(method, { host: 'evil.example.com' });
      expect(response.status).toBe(403);
    });

    it('refuses a foreign Origin with 403, even with a local Host', async () => {
      const response = await rawRequest('POST', { origin: 'http://evil.example.com' });
      expect(response.status).toBe(403);
    });

    it('refuses the opaque "null" Origin', async () => {
      const response = await rawRequest('POST', { origin: 'null' });
      expect(response.status).toBe(403);
    });

    it.each(['localhost', '127.0.0.1', '[::1]'])('accepts Host and Origin %s', async (name) => {
      const port = new URL(url).port;
      const response = await rawRequest('POST', { host: `${name}:${port}`, origin: `http://${name}:${port}` });
      expect(response.status).toBe(200);
    });

    it('accepts the public URL host', async () => {
      const content2 = await startContent(engine, { config: { publicUrl: 'https://content.example.org' } });
      try {
        const response = await rawRequest('POST', { host: 'content.example.org', origin: 'https://content.example.org' }, content2.url);
        expect(response.status).toBe(200);
        const foreign = await rawRequest('POST', { host: 'other.example.org' }, content2.url);
        expect(foreign.status).toBe(403);
      } finally {
        await content2.close();
      }
    });

    /** node's fetch will not set Host; http.request will. */
    async function rawRequest(method: string, headers: Record<string, string>, base = url): Promise<{ status: number }> {
      const { request } = await import('node:http');
      const target = new URL(`${base}/mcp`);
      const body = method === 'POST' ? JSON.stringify(initializeMessage()) : undefined;
      return new Promise((resolve, reject) => {
        const req = request(
          {
            host: target.hostname,
            port: target.port,
            path: target.pathname,
            method,
            headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...BEARER, 'mcp-session-id': 'x', ...headers },
          },
          (res) => {
            res.resume();
            resolve({ status: res.statusCode ?? 0 });
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    }
  });
});

function sqlSession(id: string) {
  // A raw read of the session row, the same on both engines.
  return sql`SELECT server, protocol_version, client_name, ended_at FROM mcp_sessions WHERE id = ${id}`;
}
