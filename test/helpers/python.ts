/**
 * The official MCP Python SDK client in tests: a virtual environment at `.cache/py` with `mcp` at the pinned
 * version, created on first use (`.ci/run` creates it before the suite), and test/python/mcp_client.py run in it.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The newest `mcp` on the registry when this was written; the first to speak 2026-07-28. */
export const PYTHON_MCP = 'mcp==2.3.0';

/**
 * The SDK's connect modes and the revision each reaches against Atrium: `auto` probes `server/discover` (the
 * newest it speaks), `legacy` runs the 2025 handshake offering its newest 2025 revision.
 */
export const PYTHON_MODES = [
  ['auto', '2026-07-28'],
  ['legacy', '2025-11-25'],
] as const;

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const venv = path.join(repoRoot, '.cache', 'py');
const python = path.join(venv, 'bin', 'python');
const scripts = path.join(repoRoot, 'test', 'python');
const script = path.join(scripts, 'mcp_client.py');

/** Creates the environment unless it already holds the pinned SDK (the same commands as `.ci/run`). */
export async function ensurePythonSdk(): Promise<void> {
  const wanted = PYTHON_MCP.split('==')[1];
  if (existsSync(python)) {
    const installed = await run(python, ['-c', "import importlib.metadata as m; print(m.version('mcp'))"]).catch(() => undefined);
    if (installed?.stdout.trim() === wanted) return;
  }
  await run('python3', ['-m', 'venv', venv]);
  await run(path.join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', '--retries', '2', PYTHON_MCP], { maxBuffer: 16 * 1024 * 1024 });
}

export interface PythonClientRun {
  protocol_version: string;
  server: string | null;
  tools: string[];
  is_error: boolean;
  text: string[];
}

/** The Python SDK client against `mcpUrl` with a bearer token: lists the tools and calls one (test/python/mcp_client.py). */
export async function runPythonClient(
  mcpUrl: string,
  token: string,
  call: { tool: string; arguments?: Record<string, unknown>; mode?: 'auto' | 'legacy' },
): Promise<PythonClientRun> {
  const { stdout } = await run(python, [script, mcpUrl, token, call.mode ?? 'auto', call.tool, JSON.stringify(call.arguments ?? {})], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

/** Starts test/python/`name` in the environment, its stdin and stdout piped to the test that talks to it. */
export function spawnPythonScript(name: string, args: readonly string[]): ChildProcessWithoutNullStreams {
  return spawn(python, [path.join(scripts, name), ...args], { stdio: 'pipe' });
}
