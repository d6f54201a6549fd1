/**
 * One process per embedded database (DESIGN section 1): PGlite keeps the database in one process's memory
 * and writes it back on its own schedule, so a second process on the same directory loses data. Opening
 * one takes `<dir>.lock`, a file naming the holder (pid, its start time, command); a second process refuses
 * at once and says who holds it and what to do.
 *
 * A lock whose process is gone (SIGKILL, power loss) never blocks: the holder must be alive, and on Linux
 * its start time (`/proc/<pid>/stat`) must match the one recorded, so a recycled pid does not keep a dead
 * lock alive. Taking over a stale lock moves it aside atomically (`rename`) and checks that what was moved
 * is the stale lock, so two processes taking over at once cannot both win.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';

export interface LockHolder {
  pid: number;
  /** Linux: the process's start time in clock ticks since boot; absent elsewhere. */
  startTime?: string;
  command: string;
  host: string;
  since: string;
}

export class DatabaseInUseError extends Error {
  constructor(
    readonly directory: string,
    readonly holder: LockHolder,
  ) {
    super(
      `the embedded database ${directory} is in use by process ${holder.pid} (${holder.command}), running since ${holder.since}. ` +
        'Only one process may open an embedded database: stop that process first (or use it instead), ' +
        'or set DATABASE_URL to a PostgreSQL server, which several processes can share.',
    );
    this.name = 'DatabaseInUseError';
  }
}

export interface DatabaseLock {
  release(): Promise<void>;
}

/** Takes the lock of the embedded database in `directory`, or throws DatabaseInUseError. */
export async function lockDatabaseDirectory(directory: string): Promise<DatabaseLock> {
  const lockFile = `${directory}.lock`;
  const me = describeThisProcess();
  const candidate = `${lockFile}.${process.pid}-${randomBytes(4).toString('hex')}`;
  await writeFile(candidate, JSON.stringify(me), { mode: 0o600 });
  try {
    // Bounded: every pass either takes the lock, refuses, or removes one stale lock.
    for (let attempt = 0; attempt < 10; attempt++) {
      if (await link(candidate, lockFile).then(() => true, ignore('EEXIST'))) return heldLock(lockFile, me);
      const holder = await readHolder(lockFile);
      if (!holder) continue; // released between our attempts
      if (isAlive(holder)) throw new DatabaseInUseError(directory, holder);
      await removeStaleLock(lockFile, holder);
    }
    throw new Error(`could not take the lock ${lockFile}: it keeps changing`);
  } finally {
    await unlink(candidate).catch(() => {});
  }
}

function heldLock(lockFile: string, me: LockHolder): DatabaseLock {
  // A normal exit without close() (process.exit) releases it too; only a crash leaves it, as stale.
  const onExit = () => releaseIfOurs(lockFile, me);
  process.once('exit', onExit);
  return {
    async release() {
      process.removeListener('exit', onExit);
      releaseIfOurs(lockFile, me);
    },
  };
}

function releaseIfOurs(lockFile: string, me: LockHolder): void {
  try {
    if (sameHolder(JSON.parse(readFileSync(lockFile, 'utf8')), me)) unlinkSync(lockFile);
  } catch {
    // Already gone.
  }
}

/** Moves the stale lock aside; if what moved turns out to be a live lock taken meanwhile, puts it back. */
async function removeStaleLock(lockFile: string, stale: LockHolder): Promise<void> {
  const aside = `${lockFile}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  if (!(await rename(lockFile, aside).then(() => true, ignore('ENOENT')))) return;
  const moved = await readHolder(aside);
  if (moved && !sameHolder(moved, stale)) await link(aside, lockFile).catch(() => {});
  await unlink(aside).catch(() => {});
}

async function readHolder(file: string): Promise<LockHolder | null> {
  const text = await readFile(file, 'utf8').catch(ignore('ENOENT'));
  if (text === false) return null;
  try {
    const holder = JSON.parse(text) as LockHolder;
    if (Number.isInteger(holder.pid) && holder.pid > 0) return holder;
  } catch {
    // A lock file cut short by a crash while being written.
  }
  return { pid: 0, command: 'unknown', host: '', since: '' };
}

/** Signal 0 tests for existence (EPERM: it exists, as another user); the start time tells a recycled pid. */
function isAlive(holder: LockHolder): boolean {
  if (holder.pid <= 0) return false;
  // A process on another machine sharing the directory cannot be asked; it is taken to be alive.
  if (holder.host && holder.host !== os.hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const startTime = processStartTime(holder.pid);
  return !holder.startTime || !startTime || startTime === holder.startTime;
}

function sameHolder(a: LockHolder, b: LockHolder): boolean {
  return a.pid === b.pid && a.startTime === b.startTime && a.since === b.since;
}

function describeThisProcess(): LockHolder {
  return {
    pid: process.pid,
    startTime: processStartTime(process.pid),
    command: [process.argv0, ...process.argv.slice(1)].join(' ').slice(0, 300),
    host: os.hostname(),
    since: new Date().toISOString(),
  };
}

/** proc(5): field 22 of /proc/<pid>/stat, after the parenthesised command name (which may hold spaces). */
function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function ignore(code: string) {
  return (error: NodeJS.ErrnoException): false => {
    if (error.code === code) return false;
    throw error;
  };
}
