/**
 * `npm run test:conformance`: the MCP conformance suite's server scenarios against the content MCP server
 *. A real content service starts on an ephemeral port with an in-memory database; the suite reaches
 * it through a token-injecting proxy (token-proxy.ts), since it cannot send our bearer secret itself.
 *
 * The scenarios run once per revision the server serves (2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28); at
 * each, those that apply to a server with its own tools must pass (REVISIONS). The others call fixture tools,
 * resources and prompts that only the suite's reference server has (test_simple_text, test://static-text, …)
 * or capabilities the server does not offer; they are listed in content-expected-failures.yml with their
 * reasons, and the CLI fails the run if one of them starts passing.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createContentService } from '../../src/content/service.js';
import { runServerScenarios } from './suite.js';
import { startTokenProxy } from './token-proxy.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Per revision the content server serves (DESIGN 4.9), the scenarios that apply to a server with its own tools. */
const REVISIONS = [
  { revision: '2025-03-26', required: ['server-session-lifecycle'] },
  { revision: '2025-06-18', required: ['server-initialize', 'server-session-lifecycle', 'ping', 'tools-list'] },
  { revision: '2025-11-25', required: ['server-initialize', 'server-session-lifecycle', 'ping', 'tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection'] },
  { revision: '2026-07-28', required: ['tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection', 'http-header-validation'] },
];

async function main(): Promise<number> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-conformance-'));
  const secret = randomBytes(24).toString('base64url');
  const service = await createContentService(
    {
      host: '127.0.0.1',
      port: 0,
      publicUrl: 'http://placeholder',
      database: { dataDir: 'memory://', schema: 'content' },
      apiSecret: secret,
      dataDir,
      assetDir: path.join(dataDir, 'assets'),
      revalidate: {},
      logLevel: process.env.LOG_LEVEL ?? 'warn',
    },
    {},
  );
  const url = await service.listen();
  service.ctx.config.publicUrl = url;
  const proxy = await startTokenProxy(url, secret);
  try {
    return await runServerScenarios({ name: 'content', proxy, expectedFailures: path.join(here, 'content-expected-failures.yml'), revisions: REVISIONS });
  } finally {
    await proxy.close();
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
