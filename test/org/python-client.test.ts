/**
 * Issue 21 item 8: the official MCP Python SDK client (`mcp` from PyPI, test/helpers/python.ts) against the org
 * server with a bearer token from the real OAuth flow, at the newest revision it speaks (its `auto` mode probes
 * `server/discover`: 2026-07-28) and with the 2025 handshake (it offers 2025-11-25).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgTools } from '../../src/org/mcp/server.js';
import { engines } from '../helpers/databases.js';
import { connectClient } from '../helpers/oauth-flow.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { ALL_SCOPES } from '../helpers/org-mcp.js';
import { ensurePythonSdk, PYTHON_MODES, runPythonClient } from '../helpers/python.js';

describe.each(engines)('the Python SDK client against org MCP on %s', (engine) => {
  let org: TestOrg;
  let token: string;
  beforeAll(async () => {
    await ensurePythonSdk();
    org = await startOrg(engine);
    token = (await connectClient(org, { scopes: ALL_SCOPES, clientName: 'Python agent' })).accessToken;
  }, 600_000);
  afterAll(() => org?.close());

  it.each(PYTHON_MODES)('in %s mode speaks %s, lists the org tools and calls service_context', async (mode, revision) => {
    const run = await runPythonClient(`${org.url}/mcp`, token, { mode, tool: 'service_context' });
    expect(run).toMatchObject({ protocol_version: revision, server: 'atrium-org', is_error: false });
    expect([...run.tools].sort()).toEqual(orgTools.map((tool) => tool.name).sort());
    expect(JSON.parse(run.text[0]).person).toMatchObject({ email: OWNER.email });
  });

  it('gets a catalogued error as an isError result', async () => {
    const run = await runPythonClient(`${org.url}/mcp`, token, { tool: 'get_operation', arguments: { operation_id: 'op_doesnotexist' } });
    expect(run.is_error).toBe(true);
    expect(JSON.parse(run.text[0]).error.code).toBe('not_found');
  });
});
