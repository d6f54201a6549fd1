/**
 * The signed poster's own rules (src/platform/outbound.ts), against real local HTTP servers: what the
 * organization's callers see of each (redirects, sizes, stalls, Retry-After) is in test/org/outbound-calls.test.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES, sendOutbound } from '../../src/platform/outbound.js';
import { withTraceparent } from '../../src/platform/trace.js';

const servers: http.Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server on port 0 answering every request with `handle`; counts the connections it accepted. */
async function serve(handle: http.RequestListener): Promise<{ url: string; connections: () => number; requests: http.IncomingMessage[] }> {
  const requests: http.IncomingMessage[] = [];
  let connections = 0;
  const server = http.createServer((request, response) => {
    requests.push(request);
    request.resume();
    request.on('end', () => handle(request, response));
  });
  server.on('connection', () => connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, connections: () => connections, requests };
}

describe('sendOutbound', () => {
  it('reads the whole answer, sends the body with its length and the current trace, and keeps the connection for the next call', async () => {
    const receiver = await serve((_request, response) => response.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}'));
    const trace = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const results = [];
    for (let i = 0; i < 3; i++) {
      results.push(await withTraceparent(trace, () => sendOutbound({ url: receiver.url, body: '{"n":1}', headers: { 'content-type': 'application/json' }, timeoutMs: 5000 })));
    }
    expect(results).toEqual(Array(3).fill({ kind: 'answer', status: 201, text: '{"ok":true}' }));
    const [first] = receiver.requests;
    expect(first.method).toBe('POST');
    expect(first.headers['content-length']).toBe('7');
    expect(first.headers['user-agent']).toBe('Atrium');
    // The same trace id and flags, a parent id of this hop's own.
    expect(first.headers.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    expect(first.headers.traceparent).not.toBe(trace);
    expect(receiver.connections()).toBe(1);
  });

  it('a connection that closes before the whole answer is a failure, never half an answer', async () => {
    const receiver = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('0123456789', () => response.socket?.destroy());
    });
    const result = await sendOutbound({ url: receiver.url, body: '{}', timeoutMs: 5000 });
    expect(result).toEqual({ kind: 'failed', reason: expect.stringMatching(/^could not be reached: /) });
  });

  it('an answer declaring more than 1 MiB fails at its headers, without waiting for its body', async () => {
    const receiver = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': String(MAX_ANSWER_BYTES + 1) });
      response.write('{"a":'); // and stalls: nothing of it is waited for
    });
    // Waiting for the body would end at the deadline instead, failing "gave no complete answer within 10 s".
    const result = await sendOutbound({ url: receiver.url, body: '{}', timeoutMs: 10_000 });
    expect(result).toEqual({ kind: 'failed', reason: expect.stringContaining('too large') });
  });

  it('parses Retry-After only on 429 and 503', async () => {
    let status = 429;
    const receiver = await serve((_request, response) => response.writeHead(status, { 'retry-after': '7' }).end());
    expect(await sendOutbound({ url: receiver.url, body: '{}', timeoutMs: 5000 })).toEqual({ kind: 'answer', status: 429, text: '', retryAfterMs: 7000 });
    status = 500;
    expect(await sendOutbound({ url: receiver.url, body: '{}', timeoutMs: 5000 })).toEqual({ kind: 'answer', status: 500, text: '' });
  });

  it('an address that refuses, a malformed URL or another scheme fails naming why, and never throws', async () => {
    const closed = await serve(() => {});
    const { url } = closed;
    await new Promise((resolve) => servers.pop()!.close(resolve));
    expect(await sendOutbound({ url, body: '{}', timeoutMs: 5000 })).toEqual({ kind: 'failed', reason: expect.stringContaining('ECONNREFUSED') });
    expect(await sendOutbound({ url: 'not a url', body: '{}', timeoutMs: 5000 })).toEqual({ kind: 'failed', reason: expect.stringMatching(/^could not be reached: /) });
    expect(await sendOutbound({ url: 'ftp://127.0.0.1/file', body: '{}', timeoutMs: 5000 })).toEqual({
      kind: 'failed',
      reason: 'could not be reached: ftp: is not http or https',
    });
  });
});
