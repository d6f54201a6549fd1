/**
 * Speaking to the content MCP endpoint in tests: the official SDK client (Streamable HTTP client transport with
 * the bearer header), and raw JSON-RPC over fetch for the transport rules the SDK client would hide.
 */
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import { TEST_SECRET } from './content.js';

export const BEARER = { authorization: `Bearer ${TEST_SECRET}` };
export const AGENT_NAME = 'test-agent';

/** The 19 tools of spec 4.3, by name. */
export const TOOL_NAMES = [
  'list_blog_posts',
  'get_blog_post',
  'create_blog_post',
  'update_blog_post',
  'publish_blog_post',
  'delete_blog_post',
  'list_changelog_entries',
  'get_changelog_entry',
  'create_changelog_entry',
  'update_changelog_entry',
  'delete_changelog_entry',
  'list_roadmap_items',
  'get_roadmap_item',
  'create_roadmap_item',
  'update_roadmap_item',
  'delete_roadmap_item',
  'search_content',
  'get_asset_upload_url',
  'get_activity_log',
];

export interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  close(): Promise<void>;
}

/**
 * An initialized SDK client session against `{baseUrl}/mcp`, at the spec's `2025-03-26` unless a test asks for
 * another revision (the SDK's own default would be its newest 2025 revision).
 */
export async function connectClient(baseUrl: string, name = AGENT_NAME, protocolVersion = '2025-03-26'): Promise<Connected> {
  const client = new Client({ name, version: '1.0.0' }, { supportedProtocolVersions: [protocolVersion] });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: BEARER } });
  await client.connect(transport);
  return {
    client,
    transport,
    async close() {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** The JSON a successful tool result carries; fails the test on an error result. */
export async function callOk(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = textOf(result);
  if (result.isError) throw new Error(`${name} answered an error: ${text}`);
  return JSON.parse(text);
}

/** The catalogued error body `{error: {code, message, details}}` of a refused call; fails on success. */
export async function callError(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ code: string; message: string; details?: any }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = textOf(result);
  expect(result.isError, `${name} should be refused, got ${text}`).toBe(true);
  const body = JSON.parse(text);
  expect(Object.keys(body)).toEqual(['error']);
  return body.error;
}

function textOf(result: CallToolResult): string {
  expect(result.content).toHaveLength(1);
  const [content] = result.content;
  expect(content.type).toBe('text');
  return (content as { text: string }).text;
}

// ---------------------------------------------------------------------------------------------------------
// Raw HTTP

export const ACCEPT_BOTH = 'application/json, text/event-stream';

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The JSON body, or the JSON-RPC messages of an SSE body. */
  json: any;
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  const response = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT_BOTH, ...BEARER, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return read(response);
}

export async function read(response: Response): Promise<RawResponse> {
  const text = await response.text();
  let json: unknown;
  if (response.headers.get('content-type')?.includes('text/event-stream')) json = sseMessages(text);
  else if (text) json = JSON.parse(text);
  return { status: response.status, headers: response.headers, text, json };
}

/** The `data:` payloads of an SSE body, parsed (comments and empty priming events skipped). */
export function sseMessages(text: string): unknown[] {
  return text
    .split('\n\n')
    .map((event) => event.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('\n'))
    .filter((data) => data.length > 0)
    .map((data) => JSON.parse(data));
}

export function initializeMessage(protocolVersion = '2025-03-26', id: number | string = 1, clientName = 'raw-client') {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: clientName, version: '0.1.0' } },
  };
}

/** A raw initialize + initialized handshake; returns the session id. */
export async function openSession(url: string, clientName = 'raw-client'): Promise<string> {
  const response = await post(url, initializeMessage('2025-03-26', 1, clientName));
  expect(response.status).toBe(200);
  const id = response.headers.get('mcp-session-id');
  expect(id).toBeTruthy();
  const initialized = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id! });
  expect(initialized.status).toBe(202);
  return id!;
}

export function sessionHeaders(sessionId: string): Record<string, string> {
  return { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-03-26' };
}
