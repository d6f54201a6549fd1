/**
 * `bin/atrium.js` run as an operator runs it: a real child process with its own environment, on ephemeral
 * ports, whose output is kept so tests can check what the operator is told.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const cli = path.resolve('bin/atrium.js');

export interface AtriumProcess {
  child: ChildProcess;
  /** Everything printed so far, stdout and stderr together. */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/** Starts `atrium <args>` with the environment given (plus PATH and HOME) and ports 0. */
export function runAtrium(args: string[], env: NodeJS.ProcessEnv): AtriumProcess {
  const child = spawn(process.execPath, [cli, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ORG_PORT: '0', CONTENT_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Starts `atrium serve` and waits until each expected service says it listens; returns their URLs. */
export async function serveAtrium(args: string[], env: NodeJS.ProcessEnv, expected: string[]): Promise<AtriumProcess & { urls: Record<string, string> }> {
  const started = runAtrium(['serve', ...args], env);
  const urls: Record<string, string> = {};
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      for (const match of started.output().matchAll(/(\w+) service at \S+ \(listening on ([\d.:]+)\)/g)) urls[match[1]] = `http://${match[2]}`;
      if (expected.every((name) => urls[name])) resolve();
    };
    started.child.stdout!.on('data', check);
    void started.exited.then((code) => reject(new Error(`atrium serve exited early with ${code}:\n${started.output()}`)));
  });
  return { ...started, urls };
}

/** Stops a process that may still run; resolves once it is gone. */
export async function stopAtrium(started: AtriumProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null | undefined> {
  if (!started) return undefined;
  if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill(signal);
  return started.exited;
}
