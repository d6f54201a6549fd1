/**
 * Speaking to the org MCP endpoint as a connected client would: a token from the real OAuth flow
 * (oauth-flow.ts) for the scopes a test needs, then the official SDK client with that bearer token.
 * `callOk` checks what every org result must be: JSON text and the same object as `structuredContent`.
 */
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import type { TestOrg } from './org.js';
import { connectClient, type ConnectOptions, type ConnectedClient } from './oauth-flow.js';

/** Every scope of spec 2.3. */
export const ALL_SCOPES = [
  'service:ask',
  'agents:message',
  'memory:read',
  'memory:write',
  'task:read',
  'task:write',
  'integrations:read',
  'integrations:act',
  'governance:admin',
];

export interface OrgMcp {
  client: Client;
  connected: ConnectedClient;
  /** The result object of a successful call; fails the test on an error result. */
  callOk(name: string, args?: Record<string, unknown>): Promise<any>;
  /** The catalogued error `{code, message, details}` of a refused call; fails on success. */
  callError(name: string, args?: Record<string, unknown>): Promise<{ code: string; message: string; details?: any }>;
  close(): Promise<void>;
}

/** A person's client, authorized through OAuth for `scopes` (default all), with an initialized SDK session. */
export async function connectOrgMcp(org: TestOrg, options: ConnectOptions = {}): Promise<OrgMcp> {
  const connected = await connectClient(org, { scopes: ALL_SCOPES, ...options });
  return openOrgMcp(org, connected);
}

/**
 * An SDK session for a token the test already holds, at the contract's `2025-06-18` unless a test asks for
 * another 2025 revision (the SDK's own default would be its newest).
 */
export async function openOrgMcp(org: TestOrg, connected: ConnectedClient, protocolVersion = '2025-06-18'): Promise<OrgMcp> {
  const client = new Client({ name: 'org-test-client', version: '1.0.0' }, { supportedProtocolVersions: [protocolVersion] });
  const transport = new StreamableHTTPClientTransport(new URL(`${org.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${connected.accessToken}` } },
  });
  await client.connect(transport);
  return {
    client,
    connected,
    async callOk(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = textOf(result);
      if (result.isError) throw new Error(`${name} answered an error: ${text}`);
      const value = JSON.parse(text);
      expect(result.structuredContent).toEqual(value);
      return value;
    },
    async callError(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = textOf(result);
      expect(result.isError, `${name} should be refused, got ${text}`).toBe(true);
      const body = JSON.parse(text);
      expect(Object.keys(body)).toEqual(['error']);
      return body.error;
    },
    async close() {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

function textOf(result: CallToolResult): string {
  expect(result.content).toHaveLength(1);
  const [content] = result.content;
  expect(content.type).toBe('text');
  return (content as { text: string }).text;
}

/** Polls the operation until it leaves queued and running (the runner works on the job queue), 50 ms apart. */
export async function settleOperation(client: OrgMcp, operationId: string, attempts = 200): Promise<any> {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const operation = await client.callOk('get_operation', { operation_id: operationId });
    if (!['queued', 'running'].includes(operation.status)) return operation;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`operation ${operationId} did not settle`);
}
