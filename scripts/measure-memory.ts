/**
 * `npm run measure:memory`: the resident memory of `npm start` (both services, embedded database) when idle,
 * on the first start with a fresh data directory and again after a restart on the same directory. Reads
 * VmRSS from /proc (Linux) for the serving node process and for the whole process tree `npm start` spawns,
 * and how long each start took until both services answered `/health`.
 *
 * With `--before REF` it measures a clean checkout of REF (a git worktree sharing this tree's node_modules) and
 * this tree in the same run, alternating between the two `--rounds` times, so a busy machine weighs on both
 * alike; the table goes to bench/RESULTS.md (section "memory").
 *
 * Usage: npm run measure:memory [-- --settle SECONDS] [--before GIT_REF [--rounds N]]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describeMachine, machineInfo } from '../bench/lib/machine.js';
import { formatTable, writeResultsSection } from '../bench/lib/report.js';
import { freePort, waitForHealth } from './lib/processes.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { settle: { type: 'string', default: '5' }, before: { type: 'string' }, rounds: { type: 'string', default: '2' } } });
const settleMs = Number(values.settle) * 1000;

interface Sample {
  /** The process serving both services. */
  server: number;
  /** Everything `npm start` runs: npm, the shell, node. */
  tree: number;
  /** Seconds from `npm start` until both services answered `/health`. */
  ready: number;
}

interface Checkout {
  label: string;
  dir: string;
  first: Sample[];
  restart: Sample[];
}

async function main(): Promise<void> {
  if (!values.before) {
    const current = checkout('this tree', repoRoot);
    await measureStarts(current);
    console.log(`npm start, embedded database, idle ${settleMs / 1000} s after both services answered /health:`);
    console.log(`  first start (new data directory): ${describe(current.first)}`);
    console.log(`  restart (same data directory):    ${describe(current.restart)}`);
    return;
  }
  const machine = describeMachine(machineInfo());
  const worktree = await addWorktree(values.before);
  try {
    const checkouts = [checkout(`before: ${values.before} (${shortCommit(worktree)})`, worktree), checkout(`after: this tree (${shortCommit(repoRoot)}${dirty() ? ', uncommitted changes' : ''})`, repoRoot)];
    for (let round = 1; round <= Number(values.rounds); round++) {
      for (const entry of checkouts) {
        console.error(`round ${round}: ${entry.label}`);
        await measureStarts(entry);
      }
    }
    const table = formatTable(
      ['`npm start`, serving process (tree)', 'first start (new data directory)', 'restart (same directory)'],
      checkouts.map((entry) => [entry.label, describe(entry.first), describe(entry.restart)]),
    );
    console.log(table);
    await writeResultsSection('memory', report(table, machine));
  } finally {
    execFileSync('git', ['worktree', 'remove', '--force', worktree], { cwd: repoRoot });
  }
}

function checkout(label: string, dir: string): Checkout {
  return { label, dir, first: [], restart: [] };
}

/** One first start on a new data directory, then a restart on it. */
async function measureStarts(entry: Checkout): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-memory-'));
  try {
    const env = { ...process.env, ATRIUM_DATA_DIR: dataDir, ORG_PORT: String(await freePort()), CONTENT_PORT: String(await freePort()), LOG_LEVEL: 'warn' };
    entry.first.push(await measureOneStart(entry.dir, env));
    entry.restart.push(await measureOneStart(entry.dir, env));
  } finally {
    // The server may still be writing its last files as npm exits: retry rather than fail the whole run.
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
}

/** A detached worktree of `ref` in a temporary directory, using this tree's node_modules. */
async function addWorktree(ref: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-memory-before-'));
  execFileSync('git', ['worktree', 'add', '--detach', '--force', dir, ref], { cwd: repoRoot, stdio: 'ignore' });
  await symlink(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

function shortCommit(dir: string): string {
  return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
}

function dirty(): boolean {
  return execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: repoRoot, encoding: 'utf8' }).trim() !== '';
}

async function measureOneStart(cwd: string, env: NodeJS.ProcessEnv): Promise<Sample> {
  const started = performance.now();
  const child = spawn('npm', ['start', '--silent'], { cwd, env, stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  try {
    await Promise.all([waitForHealth(`http://127.0.0.1:${env.ORG_PORT}/health`), waitForHealth(`http://127.0.0.1:${env.CONTENT_PORT}/health`)]);
    const ready = (performance.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const tree = [child.pid!, ...descendants(child.pid!)];
    const rss = tree.map((pid) => ({ pid, rss: rssOf(pid), command: commandOf(pid) }));
    const server = rss.filter((entry) => entry.command.includes('bin/atrium.js')).reduce((max, entry) => Math.max(max, entry.rss), 0);
    return { server, tree: rss.reduce((sum, entry) => sum + entry.rss, 0), ready };
  } finally {
    await stop(child);
  }
}

function descendants(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return children.flatMap((child) => [child, ...descendants(child)]);
}

function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((entry) => entry.startsWith('VmRSS:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) * 1024;
}

function commandOf(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
}

/** SIGTERM to the whole group (npm, the shell and node), then wait for npm to exit. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, 'SIGTERM');
  await exited;
}

/** Each run's serving process in MB, in the order measured, then the process trees and the times to ready. */
function describe(samples: Sample[]): string {
  const each = (figure: (sample: Sample) => string) => samples.map(figure).join(' / ');
  return `${each((sample) => mb(sample.server))} MB (tree ${each((sample) => mb(sample.tree))} MB), ready in ${each((sample) => sample.ready.toFixed(1))} s`;
}

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}

function report(table: string, machine: string): string {
  return `## Memory — \`npm start\` idle, embedded database

Command: \`npm run measure:memory -- --before ${values.before} --rounds ${values.rounds}\` (scripts/measure-memory.ts): for each
checkout in turn, \`npm start\` on a fresh temporary data directory, both services, VmRSS from \`/proc/<pid>/status\`
${settleMs / 1000} s after both answer \`/health\`; then stopped and started again on the same directory. The two checkouts
alternate, one figure per round. "Serving process" is the node process serving both services; the tree adds npm
and its shell; "ready in" is the time from \`npm start\` until both answered \`/health\` (npm, the compile check,
creating the databases on a first start). Target (issue 22 item 4): under 250 MB on a first start and on a restart.
Machine: ${machine}.

${table}
`;
}

await main();
