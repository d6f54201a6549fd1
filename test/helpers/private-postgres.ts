/**
 * A PostgreSQL cluster of the test's own (initdb into a temporary directory, pg_ctl on a free port), so a test
 * may restart or stop the database under a running service — the shared server on 5432 must stay up for the
 * rest of the suite. PostgreSQL refuses to run as root, so as root the binaries run as the `postgres` user.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';

export interface PrivatePostgres {
  url: string;
  restart(): void;
  stop(): void;
  start(): void;
  /** Stops every process of the cluster (SIGSTOP) without closing a connection: a database that hangs. */
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

/** The directory of PostgreSQL's server binaries, or undefined where none is installed. */
export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const [version] = readdirSync(root).sort().reverse();
  const bin = version && path.join(root, version, 'bin');
  return bin && existsSync(path.join(bin, 'initdb')) ? bin : undefined;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinaries();
  if (!bin) throw new Error('PostgreSQL server binaries are not installed (/usr/lib/postgresql/*/bin)');
  const asRoot = process.getuid?.() === 0;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-private-pg-'));
  const data = path.join(dir, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dir, uid, gid);
  }
  const run = (program: string, args: string[]) => {
    const command = path.join(bin, program);
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
    execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
  };
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const ctl = (...args: string[]) => run('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-w', '-t', '30', ...args]);
  ctl('-o', options, 'start');
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: () => ctl('-m', 'fast', '-o', options, 'restart'),
    stop() {
      ctl('-m', 'fast', 'stop');
      running = false;
    },
    start() {
      ctl('-o', options, 'start');
      running = true;
    },
    freeze: () => signalCluster(data, 'STOP'),
    thaw: () => signalCluster(data, 'CONT'),
    async close() {
      signalCluster(data, 'CONT');
      if (running) ctl('-m', 'immediate', 'stop');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Sends `signal` to the postmaster and every process it started. */
function signalCluster(data: string, signal: 'STOP' | 'CONT'): void {
  const pidFile = path.join(data, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const postmaster = readFileSync(pidFile, 'utf8').split('\n')[0].trim();
  const children = execFileSync('ps', ['-o', 'pid=', '--ppid', postmaster]).toString().split(/\s+/).filter(Boolean);
  execFileSync('kill', [`-${signal}`, postmaster, ...children]);
}
