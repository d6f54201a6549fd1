/**
 * Part of `npm run test:conformance`: the conformance suite's authorization-server scenarios, from
 * its 0.2 line (installed on demand beside the 0.1 line by packages.ts, since the 0.1 line the server scenarios
 * use has no `authorization` command), against a real org service:
 *
 * - `authorization-server-metadata-endpoint`: the RFC 8414 document, its issuer equal to `--url`;
 * - `authorization-code-grant`: the suite prints an authorization URL and waits on its own loopback callback;
 *   this script plays the person in a real headless Chromium (Debian's /usr/bin/chromium): it opens the URL,
 *   signs in on the sign-in page and clicks Allow on the consent page, by their accessible names (DESIGN 4.6).
 *
 * The suite's client is registered beforehand through POST /oauth/register with the portless loopback
 * redirect URI `http://127.0.0.1/callback`, which matches the suite's callback on any port (spec 4.1 rule 2).
 * Both scenarios must run and every check must pass (the CIMD advertisement check included).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';
import { nodeBinary } from '../lib/node-binary.js';
import { conformanceCli } from './packages.js';
import { startConformanceOrg } from './org-service.js';
import { repoRoot, resultsDir } from './suite.js';

const REQUIRED = ['authorization-server-metadata-endpoint', 'authorization-code-grant'];
const OWNER = { email: 'owner@example.com', password: randomBytes(12).toString('base64url') };

async function main(): Promise<number> {
  const org = await startConformanceOrg(OWNER);
  const issuer = org.url;
  const outputDir = resultsDir('authorization');
  try {
    const clientId = await registerSuiteClient(issuer);
    const code = await runAuthorizationSuite([
      'authorization',
      '--url',
      issuer,
      '--client-id',
      clientId,
      '--resource',
      `${issuer}/mcp`,
      '--port',
      String(await freePort()),
      '--output-dir',
      outputDir,
      ...process.argv.slice(2),
    ]);
    const problems = await checkResults(outputDir);
    for (const problem of problems) console.error(`conformance (authorization): ${problem}`);
    if (problems.length === 0 && code === 0) console.log(`conformance (authorization): ${REQUIRED.join(', ')} passed (results in ${outputDir})`);
    return problems.length > 0 ? 1 : code;
  } finally {
    await org.close();
  }
}

/** RFC 7591 registration, as any client would. */
async function registerSuiteClient(issuer: string): Promise<string> {
  const response = await fetch(`${issuer}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'MCP conformance suite', redirect_uris: ['http://127.0.0.1/callback'] }),
  });
  const record = (await response.json()) as { client_id?: string };
  if (response.status !== 201 || !record.client_id) throw new Error(`registration failed: ${response.status} ${JSON.stringify(record)}`);
  return record.client_id;
}

/** Runs the suite under Node 22, playing the person whenever it prints an authorization URL. */
async function runAuthorizationSuite(args: string[]): Promise<number> {
  const node = await nodeBinary(22, path.join(repoRoot, '.cache'), { orLater: true });
  const cli = await conformanceCli(path.join(repoRoot, '.cache'), 'authorization');
  const cwd = path.join(repoRoot, '.cache', 'conformance');
  await mkdir(cwd, { recursive: true });
  const child = spawn(node, [cli, ...args], { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  const consents: Promise<void>[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    console.log(line);
    if (/^https?:\/\/\S+\/oauth\/authorize\?/.test(line.trim())) consents.push(consentInBrowser(line.trim()));
  });
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });
  await Promise.all(consents);
  return code;
}

/** The person: opens the authorization URL, signs in, and allows, in a fresh headless Chromium profile. */
async function consentInBrowser(authorizationUrl: string): Promise<void> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'atrium-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(authorizationUrl);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
    console.log('conformance (authorization): signed in and allowed in Chromium');
  } catch (error) {
    console.error(`conformance (authorization): the browser could not complete consent: ${(error as Error).message}`);
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}

/** Every required scenario ran, and none of its checks failed. */
async function checkResults(outputDir: string): Promise<string[]> {
  const runs = await readdir(outputDir).catch(() => [] as string[]);
  const problems: string[] = [];
  for (const scenario of REQUIRED) {
    const run = runs.find((name) => name.includes(scenario));
    if (!run) {
      problems.push(`${scenario}: did not run`);
      continue;
    }
    const checks = JSON.parse(await readFile(path.join(outputDir, run, 'checks.json'), 'utf8')) as Array<{ id: string; status: string; errorMessage?: string }>;
    if (checks.length === 0) problems.push(`${scenario}: no checks`);
    for (const check of checks.filter((c) => c.status !== 'SUCCESS')) problems.push(`${scenario}: ${check.id} ${check.status} ${check.errorMessage ?? ''}`.trim());
  }
  return problems;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

process.exitCode = await main();
