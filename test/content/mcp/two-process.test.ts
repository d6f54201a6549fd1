/**
 * DESIGN 6: with two content processes on one PostgreSQL database and no sticky routing, a session
 * initialized on one continues on the other, and ending it on one ends it everywhere.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContent, type TestContent } from '../../helpers/content.js';
import { postgresUrl, testDatabase, type TestDatabase } from '../../helpers/databases.js';
import { BEARER, callOk, initializeMessage, post, sessionHeaders } from './mcp-client.js';

describe.skipIf(!postgresUrl)('content MCP across two processes on one PostgreSQL', () => {
  let database: TestDatabase;
  let first: TestContent;
  let second: TestContent;
  beforeAll(async () => {
    database = testDatabase('postgres');
    first = await startContent('postgres', { database });
    second = await startContent('postgres', { database });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await database?.drop();
  });

  it('continues on the second process a session initialized on the first', async () => {
    const init = await post(first.url, initializeMessage('2025-03-26', 1, 'roaming-agent'));
    const session = init.headers.get('mcp-session-id')!;
    expect((await post(second.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionHeaders(session))).status).toBe(202);

    const created = await post(
      second.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_blog_post', arguments: { title: 'Written on the second process' } } },
      sessionHeaders(session),
    );
    expect(created.status).toBe(200);
    expect(JSON.parse(created.json.result.content[0].text)).toMatchObject({ slug: 'written-on-the-second-process' });

    const log = await post(
      first.url,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_activity_log', arguments: { limit: 1 } } },
      sessionHeaders(session),
    );
    expect(JSON.parse(log.json.result.content[0].text).entries[0]).toMatchObject({
      resource_id: 'written-on-the-second-process',
      actor_id: 'roaming-agent',
      actor_type: 'agent',
    });
  });

  it('ends the session everywhere when it is deleted on one process', async () => {
    const init = await post(first.url, initializeMessage());
    const session = init.headers.get('mcp-session-id')!;
    const deleted = await fetch(`${second.url}/mcp`, { method: 'DELETE', headers: { ...BEARER, ...sessionHeaders(session) } });
    expect(deleted.status).toBe(200);
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    expect((await post(first.url, ping, sessionHeaders(session))).status).toBe(404);
    expect((await post(second.url, ping, sessionHeaders(session))).status).toBe(404);
  });

  it('serves an SDK client whose requests alternate between the processes', async () => {
    // A load balancer without sticky sessions: every request goes to the other process than the last.
    let turn = 0;
    const urls = [first.url, second.url];
    const roundRobin: typeof fetch = (input, init) => {
      const target = new URL(typeof input === 'string' || input instanceof URL ? input.toString() : input.url);
      const base = new URL(urls[turn++ % 2]);
      target.host = base.host;
      return fetch(target, init);
    };
    const client = new Client({ name: 'balanced-agent', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`), { fetch: roundRobin, requestInit: { headers: BEARER } });
    await client.connect(transport);
    try {
      for (let n = 1; n <= 3; n++) await callOk(client, 'create_roadmap_item', { title: `Balanced item ${n}` });
      const list = await callOk(client, 'list_roadmap_items', {});
      expect(list.items.map((item: { title: string }) => item.title).sort()).toEqual(['Balanced item 1', 'Balanced item 2', 'Balanced item 3']);
      expect(turn).toBeGreaterThanOrEqual(6);
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });
});
