/**
 * The MCP conformance suite's server scenarios against the organization MCP endpoint. A real org
 * service starts on an ephemeral port with an in-memory database; a token is minted through the real OAuth
 * flow (org-token.ts: registration, PKCE, sign-in, consent, code exchange) and the suite reaches the endpoint
 * through the token-injecting proxy, since it cannot walk our sign-in itself.
 *
 * The scenarios run once per revision the server serves (2025-06-18, 2025-11-25, 2026-07-28); at each, those
 * that apply to a server with its own tools must pass (REVISIONS). The scenarios calling the suite's fixture
 * tools, resources and prompts, or capabilities the server does not offer, are in org-expected-failures.yml
 * with their reasons.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCOPE_NAMES } from '../../src/auth/scopes.js';
import { startConformanceOrg } from './org-service.js';
import { mintOrgToken } from './org-token.js';
import { runServerScenarios } from './suite.js';
import { startTokenProxy } from './token-proxy.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Per revision the org server serves (DESIGN 4.9), the scenarios that apply to a server with its own tools. */
const REVISIONS = [
  { revision: '2025-06-18', required: ['server-initialize', 'server-session-lifecycle', 'ping', 'tools-list'] },
  { revision: '2025-11-25', required: ['server-initialize', 'server-session-lifecycle', 'ping', 'tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection'] },
  { revision: '2026-07-28', required: ['tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection', 'http-header-validation'] },
];

async function main(): Promise<number> {
  const owner = { email: 'conformance@example.com', password: randomBytes(18).toString('base64url') };
  const org = await startConformanceOrg(owner);
  try {
    const token = await mintOrgToken({ origin: org.url, ...owner, scopes: SCOPE_NAMES, clientName: 'MCP conformance suite' });
    const proxy = await startTokenProxy(org.url, token);
    try {
      return await runServerScenarios({ name: 'org', proxy, expectedFailures: path.join(here, 'org-expected-failures.yml'), revisions: REVISIONS });
    } finally {
      await proxy.close();
    }
  } finally {
    await org.close();
  }
}

process.exitCode = await main();
