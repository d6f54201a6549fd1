/**
 * Runs the `@modelcontextprotocol/conformance` CLI (pinned in packages.ts, installed on demand) under Node 22, with its results
 * written below `.cache/conformance/` instead of the working tree. Exit code 0 means every applicable scenario
 * passed and every listed expected failure failed (the CLI also fails a baseline entry that starts passing).
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBinary } from '../lib/node-binary.js';
import { conformanceCli } from './packages.js';
import type { TokenProxy } from './token-proxy.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cacheRoot = path.join(repoRoot, '.cache');

export async function runConformance(args: string[]): Promise<number> {
  const node = await nodeBinary(22, cacheRoot, { orLater: true });
  const cli = await conformanceCli(cacheRoot, 'server');
  const cwd = path.join(cacheRoot, 'conformance');
  await mkdir(cwd, { recursive: true });
  const child = spawn(node, [cli, ...args], { cwd, stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/**
 * The baseline only proves the listed failures failed; this proves the scenarios that must apply actually ran
 * and passed (a renamed or dropped scenario would otherwise go unnoticed). Reads the CLI's `--output-dir`.
 */
export async function assertScenariosPassed(outputDir: string, scenarios: readonly string[]): Promise<string[]> {
  const runs = await readdir(outputDir).catch(() => [] as string[]);
  const problems: string[] = [];
  for (const scenario of scenarios) {
    const run = runs.find((name) => new RegExp(`^server-${scenario}-\\d{4}-`).test(name));
    if (!run) {
      problems.push(`${scenario}: did not run`);
      continue;
    }
    const checks = JSON.parse(await readFile(path.join(outputDir, run, 'checks.json'), 'utf8')) as Array<{ id: string; status: string }>;
    const failed = checks.filter((check) => check.status === 'FAILURE');
    if (checks.length === 0) problems.push(`${scenario}: no checks`);
    for (const check of failed) problems.push(`${scenario}: ${check.id} failed`);
  }
  return problems;
}

/** A fresh folder for one run's results, below `.cache/conformance/`: `<name>-<timestamp>`. */
export function resultsDir(name: string): string {
  return path.join(cacheRoot, 'conformance', `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
}

/**
 * One revision's run: the 2025 revisions by `--spec-version` (the scenarios that apply to it, cumulative), the
 * 2026-07-28 one by `--requirements` (exactly what that revision requires, at its wire: no session, `_meta`).
 */
export interface RevisionRun {
  revision: string;
  /** Scenarios that must run and pass at this revision. */
  required: readonly string[];
}

export interface ServerScenarios {
  /** Names the run in messages and its results folders (`content`, `org`). */
  name: string;
  /** The token-injecting proxy in front of the MCP endpoint (token-proxy.ts). */
  proxy: TokenProxy;
  /** The YAML baseline of scenarios expected to fail at every revision where they run, with their reasons. */
  expectedFailures: string;
  revisions: readonly RevisionRun[];
}

/**
 * The suite's server scenarios against `{proxy}/mcp`, once per revision, then the check that each revision's
 * required scenarios passed. Extra command-line arguments go to the CLI; with `--scenario` only that scenario
 * runs and only the CLI's verdict counts. Exit code 0 when everything held at every revision.
 */
export async function runServerScenarios({ name, proxy, expectedFailures, revisions }: ServerScenarios): Promise<number> {
  const extraArgs = process.argv.slice(2);
  let failed = false;
  for (const { revision, required } of revisions) {
    const outputDir = resultsDir(`${name}-${revision}`);
    const selection = revision >= '2026-07-28' ? ['--requirements', revision] : ['--spec-version', revision];
    console.log(`conformance (${name}): server scenarios of ${revision}`);
    const code = await runConformance(['server', '--url', `${proxy.url}/mcp`, ...selection, '--expected-failures', expectedFailures, '--output-dir', outputDir, ...extraArgs]);
    const problems = extraArgs.includes('--scenario') ? [] : await assertScenariosPassed(outputDir, required);
    for (const problem of problems) console.error(`conformance (${name} ${revision}): required scenario ${problem}`);
    if (problems.length === 0 && code === 0) console.log(`conformance (${name} ${revision}): passed; required: ${required.join(', ')} (results in ${outputDir})`);
    failed ||= problems.length > 0 || code !== 0;
  }
  return failed ? 1 : 0;
}
