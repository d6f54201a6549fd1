/**
 * `npm run measure:memory`: the resident memory of `npm start` (both services, embedded database) when idle,
 * on the first start with a fresh data directory and again after a restart on the same directory. Reads
 * VmRSS from /proc (Linux) for the serving node process and for the whole process tree `npm start` spawns.
 *
 * Usage: npm run measure:memory [-- --settle SECONDS]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { freePort, waitForHealth } from './lib/processes.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { settle: { type: 'string', default: '5' } } });
const settleMs = Number(values.settle) * 1000;

interface Sample {
  /** The process serving both services. */
  server: number;
  /** Everything `npm start` runs: npm, the shell, node. */
  tree: number;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-memory-'));
  try {
    const env = { ...process.env, ATRIUM_DATA_DIR: dataDir, ORG_PORT: String(await freePort()), CONTENT_PORT: String(await freePort()), LOG_LEVEL: 'warn' };
    const first = await measureOneStart(env);
    const restart = await measureOneStart(env);
    console.log(`npm start, embedded database, idle ${settleMs / 1000} s after both services answered /health:`);
    console.log(`  first start (new data directory): ${mb(first.server)} MB RSS (process tree ${mb(first.tree)} MB)`);
    console.log(`  restart (same data directory):    ${mb(restart.server)} MB RSS (process tree ${mb(restart.tree)} MB)`);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function measureOneStart(env: NodeJS.ProcessEnv): Promise<Sample> {
  const child = spawn('npm', ['start', '--silent'], { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  try {
    await Promise.all([waitForHealth(`http://127.0.0.1:${env.ORG_PORT}/health`), waitForHealth(`http://127.0.0.1:${env.CONTENT_PORT}/health`)]);
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const tree = [child.pid!, ...descendants(child.pid!)];
    const rss = tree.map((pid) => ({ pid, rss: rssOf(pid), command: commandOf(pid) }));
    const server = rss.filter((entry) => entry.command.includes('bin/atrium.js')).reduce((max, entry) => Math.max(max, entry.rss), 0);
    return { server, tree: rss.reduce((sum, entry) => sum + entry.rss, 0) };
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

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}

await main();
