/**
 * One process per embedded database (DESIGN section 1): PGlite keeps the database in one process's memory
 * and writes it back on its own schedule, so a second process on the same directory loses data. Opening
 * one takes `<dir>.lock`, a file naming the holder (pid, its start time, command); a second process refuses
 * at once and says who holds it and what to do.
 *
 * A lock whose process is gone (SIGKILL, power loss) never blocks: the holder must be alive, and on Linux
 * its start time (`/proc/<pid>/stat`) must match the one recorded, so a recycled pid does not keep a dead
 * lock alive. The lock is taken with `link`, which fails if the file exists, and a stale one is removed
 * under a takeover mutex, so of several processes starting at once exactly one wins.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, mkdir, readFile, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';

export interface LockHolder {
  /** Random, to tell this lock from any other the same process took or takes. */
  id?: string;
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
    // Bounded: every pass takes the lock, refuses, removes a stale lock or waits briefly for another's takeover.
    for (let attempt = 0; attempt < 100; attempt++) {
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

/**
 * Removes a stale lock, one process at a time: under the takeover mutex (an exclusive `mkdir`) the lock is
 * read again and removed only if it is still that stale holder's, so a lock taken meanwhile is never removed.
 * A mutex left by a process that died while holding it (for milliseconds) is cleared after ten seconds.
 */
async function removeStaleLock(lockFile: string, stale: LockHolder): Promise<void> {
  const mutex = `${lockFile}.takeover`;
  const taken = await mkdir(mutex).then(() => true, ignore('EEXIST'));
  if (!taken) {
    const age = await stat(mutex).then((info) => Date.now() - info.mtimeMs, () => 0);
    if (age > 10_000) await rmdir(mutex).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 20));
    return;
  }
  try {
    const current = await readHolder(lockFile);
    if (current && sameHolder(current, stale)) await unlink(lockFile).catch(ignore('ENOENT'));
  } finally {
    await rmdir(mutex).catch(() => {});
  }
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
  return a.id === b.id && a.pid === b.pid && a.startTime === b.startTime && a.since === b.since;
}

function describeThisProcess(): LockHolder {
  return {
    id: randomBytes(8).toString('hex'),
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
