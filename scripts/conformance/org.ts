/**
 * The MCP conformance suite's server scenarios against the organization MCP endpoint. A real org
 * service starts on an ephemeral port with an in-memory database; a token is minted through the real OAuth
 * flow (org-token.ts: registration, PKCE, sign-in, consent, code exchange) and the suite reaches the endpoint
 * through the token-injecting proxy, since it cannot walk our sign-in itself.
 *
 * Required to pass: server-initialize, ping, tools-list, dns-rebinding-protection. The scenarios calling the
 * suite's fixture tools, resources and prompts, and server-sse-multiple-streams (it sends a protocol version
 * header the org server rightly refuses), are in org-expected-failures.yml with their reasons.
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

const REQUIRED = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

async function main(): Promise<number> {
  const owner = { email: 'conformance@example.com', password: randomBytes(18).toString('base64url') };
  const org = await startConformanceOrg(owner);
  try {
    const token = await mintOrgToken({ origin: org.url, ...owner, scopes: SCOPE_NAMES, clientName: 'MCP conformance suite' });
    const proxy = await startTokenProxy(org.url, token);
    try {
      return await runServerScenarios({ name: 'org', proxy, expectedFailures: path.join(here, 'org-expected-failures.yml'), required: REQUIRED });
    } finally {
      await proxy.close();
    }
  } finally {
    await org.close();
  }
}

process.exitCode = await main();
