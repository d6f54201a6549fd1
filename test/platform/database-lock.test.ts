/**
 * One process per embedded database (DESIGN section 1): a second `atrium serve` or an `atrium org apply` on a
 * data directory a running server holds refuses at once, naming the holder and what to do, and writes
 * nothing; a holder killed with SIGKILL leaves a lock that does not block the next start. PostgreSQL needs
 * no such lock: `org apply` works while the server runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseInUseError, lockDatabaseDirectory } from '../../src/platform/database-lock.js';
import { runAtrium, serveAtrium, stopAtrium, type AtriumProcess } from '../helpers/atrium-process.js';
import { createScratchDatabase, engines } from '../helpers/databases.js';

const ORG_FILE = `organization: { name: Example Co }
people: [{ email: ada@example.com, name: Ada, role: owner, password_env: ADA_PASSWORD }]
`;

describe('the embedded database lock', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-lock-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('refuses a second holder, naming the first, until it is released', async () => {
    const database = path.join(dir, 'held');
    const lock = await lockDatabaseDirectory(database);
    const refusal = await lockDatabaseDirectory(database).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(DatabaseInUseError);
    expect((refusal as DatabaseInUseError).holder.pid).toBe(process.pid);
    expect((refusal as Error).message).toContain(`in use by process ${process.pid}`);
    expect((refusal as Error).message).toContain('DATABASE_URL');
    await lock.release();
    await (await lockDatabaseDirectory(database)).release();
  });

  it.each([
    ['a process that has exited', () => ({ pid: exitedPid() })],
    ['a recycled pid (this process, started at another time)', () => ({ pid: process.pid, startTime: '1' })],
    ['a lock file cut short by a crash', () => null],
  ])('takes over a lock left by %s', async (_case, holder) => {
    const database = path.join(dir, `stale-${Math.random().toString(36).slice(2)}`);
    const stale = holder();
    await writeFile(`${database}.lock`, stale ? JSON.stringify({ ...stale, command: 'old', host: os.hostname(), since: '2020-01-01T00:00:00Z' }) : '{"pid":');
    const lock = await lockDatabaseDirectory(database);
    expect(JSON.parse(await readFile(`${database}.lock`, 'utf8')).pid).toBe(process.pid);
    await lock.release();
  });

  it('lets exactly one of several processes racing over a stale lock win', async () => {
    const database = path.join(dir, 'raced');
    await writeFile(`${database}.lock`, JSON.stringify({ pid: exitedPid(), command: 'old', host: os.hostname(), since: '' }));
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => lockDatabaseDirectory(database)));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected' && outcome.reason instanceof DatabaseInUseError)).toHaveLength(4);
    await (outcomes.find((outcome) => outcome.status === 'fulfilled') as PromiseFulfilledResult<{ release(): Promise<void> }>).value.release();
  });
});

describe.each(engines)('two processes on one data directory on %s', (engine) => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let dropDatabase: (() => Promise<void>) | undefined;
  const running: AtriumProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-lock-'));
    await writeFile(path.join(dir, 'org.yaml'), ORG_FILE);
    env = { ATRIUM_DATA_DIR: path.join(dir, 'data'), ATRIUM_ADMIN_EMAIL: 'owner@example.com', ATRIUM_ADMIN_PASSWORD: 'owner-password-1', ADA_PASSWORD: 'ada-password-1' };
    if (engine === 'postgres') {
      const scratch = await createScratchDatabase();
      env.ORG_DATABASE_URL = scratch.url;
      dropDatabase = scratch.drop;
    }
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((started) => stopAtrium(started, 'SIGKILL')));
  });
  afterAll(async () => {
    await dropDatabase?.();
    await rm(dir, { recursive: true, force: true });
  });

  const serveOrg = async () => {
    const started = await serveAtrium(['--only', 'org'], env, ['org']);
    running.push(started);
    return started;
  };
  const applyOrgFile = async () => {
    const applied = runAtrium(['org', 'apply', path.join(dir, 'org.yaml')], env);
    return { code: await applied.exited, output: applied.output() };
  };

  if (engine === 'pglite') {
    it('refuses a second server and org apply while one runs, and a SIGKILLed holder does not block the next start', { timeout: 180_000 }, async () => {
      const first = await serveOrg();
      const second = runAtrium(['serve', '--only', 'org'], env);
      running.push(second);
      expect(await second.exited).toBe(1);
      expect(second.output()).toContain(`is in use by process ${first.child.pid}`);
      expect(second.output()).toMatch(/stop that process first.*DATABASE_URL/s);

      const refused = await applyOrgFile();
      expect(refused.code).toBe(1);
      expect(refused.output).toContain(`is in use by process ${first.child.pid}`);

      first.child.kill('SIGKILL');
      await first.exited;
      const third = await serveOrg();
      expect((await fetch(`${third.urls.org}/health`)).status).toBe(200);
      expect(await stopAtrium(third)).toBe(0);

      // The refused apply wrote nothing: applied now, everything in the file is new.
      const applied = await applyOrgFile();
      expect(applied.code).toBe(0);
      expect(applied.output).toContain('people: 1 created (ada@example.com), 0 updated');
    });
  } else {
    it('applies an organization file while the server runs on PostgreSQL', { timeout: 180_000 }, async () => {
      await serveOrg();
      const applied = await applyOrgFile();
      expect(applied.code, applied.output).toBe(0);
      expect(applied.output).toContain('people: 1 created (ada@example.com), 0 updated');
    });
  }
});

/** The pid of a process that has already exited. */
function exitedPid(): number {
  return spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' }).pid!;
}
