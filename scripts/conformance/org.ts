/**
 * The MCP conformance suite's server scenarios against the organization MCP endpoint (issue 4). A real org
 * service starts on an ephemeral port with an in-memory database; a token is minted through the real OAuth
 * flow (org-token.ts: registration, PKCE, sign-in, consent, code exchange) and the suite reaches the endpoint
 * through the token-injecting proxy, since it cannot walk our sign-in itself.
 *
 * Required to pass: server-initialize, ping, tools-list, dns-rebinding-protection. The scenarios calling the
 * suite's fixture tools, resources and prompts, and server-sse-multiple-streams (it sends a protocol version
 * header the org server rightly refuses), are in org-expected-failures.yml with their reasons.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCOPE_NAMES } from '../../src/auth/scopes.js';
import { createOrgService } from '../../src/org/service.js';
import { mintOrgToken } from './org-token.js';
import { assertScenariosPassed, repoRoot, runConformance } from './suite.js';
import { startTokenProxy } from './token-proxy.js';

const here = path.dirname(fileURLToPath(import.meta.url));

const REQUIRED = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

async function main(): Promise<number> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-conformance-org-'));
  const owner = { email: 'conformance@example.com', password: randomBytes(18).toString('base64url') };
  const service = await createOrgService({
    host: '127.0.0.1',
    port: 0,
    publicUrl: 'http://placeholder',
    authPublicUrl: 'http://placeholder',
    database: { dataDir: 'memory://', schema: 'org' },
    dataDir,
    admin: owner,
    cimdAllowLoopback: false,
    llm: {},
    logLevel: process.env.LOG_LEVEL ?? 'warn',
  });
  const url = await service.listen();
  service.ctx.config.publicUrl = url;
  service.ctx.config.authPublicUrl = url;
  const token = await mintOrgToken({ origin: url, ...owner, scopes: SCOPE_NAMES, clientName: 'MCP conformance suite' });
  const proxy = await startTokenProxy(url, token);
  const outputDir = path.join(repoRoot, '.cache', 'conformance', `org-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const extraArgs = process.argv.slice(2);
  try {
    const code = await runConformance([
      'server',
      '--url',
      `${proxy.url}/mcp`,
      '--expected-failures',
      path.join(here, 'org-expected-failures.yml'),
      '--output-dir',
      outputDir,
      ...extraArgs,
    ]);
    if (extraArgs.includes('--scenario')) return code;
    const problems = await assertScenariosPassed(outputDir, REQUIRED);
    for (const problem of problems) console.error(`conformance (org): required scenario ${problem}`);
    if (problems.length === 0) console.log(`conformance (org): required scenarios passed: ${REQUIRED.join(', ')} (results in ${outputDir})`);
    return problems.length ? 1 : code;
  } finally {
    await proxy.close();
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
