/**
 * DESIGN 6: with two content processes on one PostgreSQL database and no sticky routing, a session
 * initialized on one continues on the other, and ending it on one ends it everywhere — although each process
 * keeps sessions and content reads in memory: the change feed drops them on every process when a write commits.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContent, type TestContent } from '../../helpers/content.js';
import { postgresUrl, testDatabase, type TestDatabase } from '../../helpers/databases.js';
import { BEARER, callOk, initializeMessage, post, sessionHeaders, type RawResponse } from '../../helpers/content-mcp-client.js';

/** A notice reaches the other process a moment after the write returns: ask again for at most a second. */
async function untilStatus(send: () => Promise<RawResponse>, status: number): Promise<number> {
  const deadline = Date.now() + 1000;
  let last = 0;
  do {
    last = (await send()).status;
  } while (last !== status && Date.now() < deadline);
  return last;
}

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
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    // Both processes have served the session, so both keep it in memory.
    expect((await post(first.url, ping, sessionHeaders(session))).status).toBe(200);
    expect((await post(second.url, ping, sessionHeaders(session))).status).toBe(200);

    const deleted = await fetch(`${second.url}/mcp`, { method: 'DELETE', headers: { ...BEARER, ...sessionHeaders(session) } });
    expect(deleted.status).toBe(200);
    const ended = Date.now();
    expect((await post(second.url, ping, sessionHeaders(session))).status).toBe(404);
    // The other process drops it when the notice of the end arrives, within moments (its cache keeps sessions 60 s).
    const refused = await untilStatus(() => post(first.url, ping, sessionHeaders(session)), 404);
    expect(refused).toBe(404);
    expect(Date.now() - ended).toBeLessThan(500);
  });

  it("answers get_blog_post on one process with the text just written on the other", async () => {
    const init = await post(first.url, initializeMessage('2025-03-26', 1, 'editing-agent'));
    const session = init.headers.get('mcp-session-id')!;
    const call = (url: string, id: number, name: string, args: Record<string, unknown>) =>
      post(url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, sessionHeaders(session));
    const resultOf = (response: RawResponse) => JSON.parse(response.json.result.content[0].text);

    const created = resultOf(await call(first.url, 2, 'create_blog_post', { title: 'Edited across processes', content: 'old text', status: 'published' }));
    // Cached on both processes.
    for (const url of [first.url, second.url, first.url, second.url]) {
      expect(resultOf(await call(url, 3, 'get_blog_post', { slug: created.slug })).content).toBe('old text');
    }

    expect((await call(first.url, 4, 'update_blog_post', { slug: created.slug, content: 'new text' })).status).toBe(200);
    const updated = Date.now();
    expect(resultOf(await call(first.url, 5, 'get_blog_post', { slug: created.slug })).content).toBe('new text');
    let seen = '';
    while (Date.now() - updated < 1000) {
      seen = resultOf(await call(second.url, 6, 'get_blog_post', { slug: created.slug })).content;
      if (seen === 'new text') break;
    }
    expect(seen).toBe('new text');
    expect(Date.now() - updated).toBeLessThan(500);
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
