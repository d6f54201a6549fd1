/**
 * Issue 21 item 6: authorization as MCP's newest revision (2026-07-28, "Authorization") words it, over real HTTP
 * with tokens from the real OAuth flow — the insufficient_scope challenge of "Runtime Insufficient Scope Errors",
 * all of a batch's missing scopes in one challenge, `iss` (RFC 9207) equal to the metadata's issuer as a client
 * compares it (plain string comparison), and the metadata telling clients that metadata documents are taken while
 * dynamic registration stays (spec 2.5, 5.1).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient, openMcpSession, postMcp, registerClient, REDIRECT_URI } from '../helpers/oauth-flow.js';

const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

describe.each(engines)('authorization in the newest wording on %s', (engine) => {
  let org: TestOrg;
  let headers: Record<string, string>;
  let metadata: Record<string, unknown>;
  let resourceMetadataUrl: string;
  beforeAll(async () => {
    org = await startOrg(engine);
    const { accessToken } = await connectClient(org, { scopes: ['service:ask'] });
    headers = await openMcpSession(org, accessToken);
    metadata = await (await fetch(`${org.url}/.well-known/oauth-authorization-server`)).json();
    resourceMetadataUrl = `${org.url}/.well-known/oauth-protected-resource/mcp`;
  }, 60_000);
  afterAll(() => org?.close());

  it('refuses a call lacking its scope with the challenge of MCP authorization 2026-07-28, parameter for parameter', async () => {
    const refused = await postMcp(org, call(2, 'record_memory', { space_id: 'x', kind: 'fact', text: 'x' }), headers);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="memory:write", resource_metadata="${resourceMetadataUrl}", ` +
        'error_description="the tool record_memory needs the scope memory:write"',
    );
    expect(refused.json).toEqual({
      error: 'insufficient_scope',
      error_description: 'the tool record_memory needs the scope memory:write',
      required_scope: 'memory:write',
    });
  });

  it('names every scope a batch lacks in one challenge, so one step-up covers the whole batch', async () => {
    const batch = [call(3, 'search_memory', { query: 'x' }), call(4, 'list_agents'), call(5, 'list_decisions'), call(6, 'get_memory', { memory_id: 'x' })];
    const refused = await postMcp(org, batch, headers);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="memory:read governance:admin", resource_metadata="${resourceMetadataUrl}", ` +
        'error_description="these tool calls need the scopes memory:read governance:admin"',
    );
    expect(refused.json.required_scope).toBe('memory:read governance:admin');
    // What the token holds still passes.
    const allowed = await postMcp(org, call(7, 'list_agents'), headers);
    expect(allowed.status).toBe(200);
  });

  it('advertises metadata documents and iss, and keeps dynamic registration for older clients', () => {
    expect(metadata).toMatchObject({
      issuer: org.config.authPublicUrl,
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      registration_endpoint: `${org.config.authPublicUrl}/oauth/register`,
    });
  });

  it('sends iss exactly as the metadata names the issuer, on an error response too (RFC 9207 §2.4, no normalizing)', async () => {
    const clientId = await registerClient(org);
    const query = new URLSearchParams({ response_type: 'token', client_id: clientId, redirect_uri: REDIRECT_URI, state: 's' });
    const response = await fetch(`${metadata.authorization_endpoint}?${query}`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const params = new URL(response.headers.get('location')!).searchParams;
    expect(params.get('error')).toBe('unsupported_response_type');
    expect(params.getAll('iss')).toEqual([metadata.issuer]);
  });
});
