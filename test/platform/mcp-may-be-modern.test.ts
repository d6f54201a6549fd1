/**
 * The MCP endpoint skips the SDK's revision routing (`isLegacyRequest`) for POSTs `mayBeModern` calls certainly
 * 2025-era. The table holds requests of both eras and malformed ones; for each, a "certainly legacy" verdict must
 * match the SDK's own, so the short cut can never send a request elsewhere than the SDK would.
 */
import { isLegacyRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { mayBeModern } from '../../src/platform/mcp/may-be-modern.js';

const call = (extra: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_blog_post', arguments: {} }, ...extra });
const claim = { [PROTOCOL_VERSION_META_KEY]: '2026-07-28' };

const cases: Array<{ name: string; header?: string; body: unknown; certainlyLegacy: boolean }> = [
  { name: 'a 2025 tools/call with its version header', header: '2025-03-26', body: call(), certainlyLegacy: true },
  { name: 'a tools/call without a version header', body: call(), certainlyLegacy: true },
  { name: 'a request with a string id and no params', header: '2025-06-18', body: { jsonrpc: '2.0', id: 'a', method: 'tools/list' }, certainlyLegacy: true },
  { name: 'a notification', header: '2025-11-25', body: { jsonrpc: '2.0', method: 'notifications/initialized' }, certainlyLegacy: true },
  { name: 'initialize', body: { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }, certainlyLegacy: true },
  { name: 'a batch of 2025 messages', header: '2025-03-26', body: [call(), call({ id: 2 })], certainlyLegacy: true },
  { name: 'a request claiming 2026-07-28 in _meta', body: call({ params: { name: 'x', _meta: claim } }), certainlyLegacy: false },
  { name: 'a request claiming a future revision in _meta', header: '2025-03-26', body: call({ params: { _meta: { [PROTOCOL_VERSION_META_KEY]: '2099-01-01' } } }), certainlyLegacy: false },
  { name: 'a request with _meta but no claim', body: call({ params: { _meta: { progressToken: 1 } } }), certainlyLegacy: false },
  { name: 'a modern header without a claim', header: '2026-07-28', body: call(), certainlyLegacy: false },
  { name: 'a modern header padded with spaces', header: ' 2026-07-28 ', body: call(), certainlyLegacy: false },
  { name: 'a batch with one claiming element', body: [call(), call({ id: 2, params: { _meta: claim } })], certainlyLegacy: false },
  { name: 'a message with an unknown member', body: call({ extra: true }), certainlyLegacy: false },
  { name: 'a fractional id', body: call({ id: 1.5 }), certainlyLegacy: false },
  { name: 'a null id', body: call({ id: null }), certainlyLegacy: false },
  { name: 'params as an array', body: call({ params: [] }), certainlyLegacy: false },
  { name: 'a wrong jsonrpc version', body: call({ jsonrpc: '1.0' }), certainlyLegacy: false },
  { name: 'not JSON-RPC at all', body: { hello: 'world' }, certainlyLegacy: false },
  { name: 'a posted response', body: { jsonrpc: '2.0', id: 1, result: {} }, certainlyLegacy: false },
];

function webRequest(header: string | undefined): Request {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (header !== undefined) headers['mcp-protocol-version'] = header;
  return new Request('http://localhost/mcp', { method: 'POST', headers });
}

describe('mayBeModern', () => {
  it.each(cases)('calls $name certainly legacy: $certainlyLegacy', ({ header, body, certainlyLegacy }) => {
    expect(!mayBeModern(header, Array.isArray(body) ? body : [body])).toBe(certainlyLegacy);
  });

  it.each(cases.filter((entry) => entry.certainlyLegacy))('agrees with the SDK that $name is legacy', async ({ header, body }) => {
    await expect(isLegacyRequest(webRequest(header), body)).resolves.toBe(true);
  });

  it('leaves to the SDK every claim the SDK routes to the modern handler', async () => {
    for (const { header, body } of cases.filter((entry) => !entry.certainlyLegacy)) {
      if (await isLegacyRequest(webRequest(header), body)) continue;
      expect(mayBeModern(header, Array.isArray(body) ? body : [body])).toBe(true);
    }
  });
});
