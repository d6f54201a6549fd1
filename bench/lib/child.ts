/**
 * Servers under test run in a child process of their own, so the load generator (autocannon, in the parent)
 * never steals their event loop and the figures measure the server, not the two sharing one thread.
 *
 * A child entry calls `serveChild(start)`; the parent calls `startChild(entry, options)`. Over the IPC
 * channel the parent sends `start` with the options, the child answers `ready` with its URL (it listens on
 * port 0) and any facts the benchmark needs, and `stop` closes it cleanly (so `--cpu-prof` is written).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';

export interface ChildServer<Info> {
  url: string;
  info: Info;
  pid: number;
  /** Closes the server and waits for the process to exit. */
  stop(): Promise<void>;
}

export interface StartChildOptions {
  /** Write a V8 CPU profile of the child into this directory (`node --cpu-prof`). */
  cpuProfDir?: string;
  /** Send the child's stdout (its log lines) to this file instead of the terminal. */
  stdoutFile?: string;
}

type ParentMessage = { type: 'start'; options: unknown } | { type: 'stop' };
type ChildMessage = { type: 'ready'; url: string; info: unknown } | { type: 'failed'; error: string };

/**
 * The V8 flags `npm start` and bin/atrium.js run the services with (package.json's start script, the shebang),
 * given to every server under test, ours and the bare ones alike, so a benchmark measures what is deployed.
 */
export const SERVING_NODE_FLAGS = ['--max-semi-space-size=4', '--v8-pool-size=1'];

/** Forks `entry` (a TypeScript file run through tsx) and resolves once it is listening. */
export function startChild<Info>(entry: string, options: unknown, startOptions: StartChildOptions = {}): Promise<ChildServer<Info>> {
  const execArgv = [...SERVING_NODE_FLAGS, '--import', 'tsx'];
  if (startOptions.cpuProfDir) {
    mkdirSync(startOptions.cpuProfDir, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${startOptions.cpuProfDir}`);
  }
  const stdout = startOptions.stdoutFile ? openSync(startOptions.stdoutFile, 'w') : 'inherit';
  const child = fork(entry, [], { execArgv, serialization: 'advanced', stdio: ['ignore', stdout, 'inherit', 'ipc'] });
  if (typeof stdout === 'number') closeSync(stdout);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  return new Promise((resolve, reject) => {
    const onEarlyExit = (code: number | null) => reject(new Error(`${entry} exited with code ${code} before it was ready`));
    child.once('exit', onEarlyExit);
    child.once('message', (message: ChildMessage) => {
      child.off('exit', onEarlyExit);
      if (message.type === 'failed') {
        child.kill();
        return reject(new Error(`${entry} failed to start: ${message.error}`));
      }
      resolve({ url: message.url, info: message.info as Info, pid: child.pid!, stop: () => stopChild(child, exited) });
    });
    send(child, { type: 'start', options });
  });
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null) return;
  send(child, { type: 'stop' });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

function send(child: ChildProcess, message: ParentMessage): void {
  child.send(message);
}

export interface RunningServer<Info> {
  url: string;
  info: Info;
  close(): Promise<void>;
}

/** The child's side: starts the server with the parent's options and serves until told to stop. */
export function serveChild<Options, Info>(start: (options: Options) => Promise<RunningServer<Info>>): void {
  if (!process.send) throw new Error('this file is a benchmark child process: start it with startChild()');
  let server: RunningServer<Info> | undefined;
  const reply = (message: ChildMessage) => process.send!(message);

  process.on('message', async (message: ParentMessage) => {
    if (message.type === 'start') {
      try {
        server = await start(message.options as Options);
        reply({ type: 'ready', url: server.url, info: server.info });
      } catch (error) {
        reply({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
        process.exit(1);
      }
    } else if (message.type === 'stop') {
      await server?.close();
      process.exit(0);
    }
  });
  // The parent died without saying stop: do not linger as an orphan holding a port and a database.
  process.on('disconnect', () => process.exit(0));
}
