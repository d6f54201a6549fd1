/**
 * An org MCP client for end-to-end tests: a token from the real OAuth flow (oauth-flow.ts, with the scopes
 * asked for, as the person named), then the official SDK client over Streamable HTTP with that bearer.
 */
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import type { TestOrg } from '../helpers/org.js';
import { connectClient, type ConnectOptions, type ConnectedClient } from './oauth-flow.js';

export interface OrgClient {
  client: Client;
  token: ConnectedClient;
  /** The structured result of a successful call; fails the test on an error result. */
  call(name: string, args?: Record<string, unknown>): Promise<any>;
  /** The catalogued error `{code, message, details}` of a refused call; fails the test on success. */
  refused(name: string, args?: Record<string, unknown>): Promise<{ code: string; message: string; details?: any }>;
  close(): Promise<void>;
}

export async function connectOrgClient(org: TestOrg, options: ConnectOptions = {}): Promise<OrgClient> {
  const token = await connectClient(org, options);
  const client = new Client({ name: options.clientName ?? 'org-test-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${org.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token.accessToken}` } },
  });
  await client.connect(transport);
  const raw = async (name: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.content).toHaveLength(1);
    return { result, body: JSON.parse((result.content[0] as { text: string }).text) };
  };
  return {
    client,
    token,
    async call(name, args = {}) {
      const { result, body } = await raw(name, args);
      if (result.isError) throw new Error(`${name} answered an error: ${JSON.stringify(body)}`);
      expect(result.structuredContent).toEqual(body);
      return body;
    },
    async refused(name, args = {}) {
      const { result, body } = await raw(name, args);
      expect(result.isError, `${name} should be refused, got ${JSON.stringify(body)}`).toBe(true);
      expect(Object.keys(body)).toEqual(['error']);
      return body.error;
    },
    async close() {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}
