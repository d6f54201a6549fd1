/**
 * `npx atrium people set-password EMAIL` as an operator runs it: the new password on standard input (never an
 * argument), the rule of ATRIUM_ADMIN_PASSWORD, and the person's web sessions signed out.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { authenticate } from '../../src/org/people/records.js';
import { people, webSessions } from '../../src/org/schema.js';
import { openDatabase } from '../../src/platform/database.js';
import { createScratchDatabase, engines } from '../helpers/databases.js';
import type { CliResult } from '../helpers/run-cli.js';

const cli = path.resolve('bin/atrium.js');

function runWithInput(args: string[], input: string, env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe.each(engines)('atrium people set-password on %s', (engine) => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let dropDatabase: (() => Promise<void>) | undefined;

  /** The org database the CLI uses, opened between its runs (the embedded one serves one process at a time). */
  async function withOrgDatabase<T>(use: (db: Awaited<ReturnType<typeof openDatabase>>['db']) => Promise<T>): Promise<T> {
    const database = await openDatabase(loadConfig(env).org.database);
    try {
      return await use(database.db);
    } finally {
      await database.close();
    }
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-cli-password-'));
    env = { PATH: process.env.PATH, HOME: process.env.HOME, ATRIUM_DATA_DIR: path.join(dir, 'data'), ADA_PASSWORD: 'ada-password-1', LOG_LEVEL: 'warn' };
    if (engine === 'postgres') {
      const scratch = await createScratchDatabase();
      env.ORG_DATABASE_URL = scratch.url;
      dropDatabase = scratch.drop;
    }
    await writeFile(path.join(dir, 'org.yaml'), 'people: [{ email: ada@example.com, name: Ada, role: owner, password_env: ADA_PASSWORD }]\n');
    const applied = await runWithInput(['org', 'apply', path.join(dir, 'org.yaml')], '', env);
    expect(applied.code, applied.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await dropDatabase?.();
    await rm(dir, { recursive: true, force: true });
  });

  it('sets the password read from standard input and signs out every web session of the person', { timeout: 120_000 }, async () => {
    await withOrgDatabase(async (db) => {
      const [ada] = await db.select({ id: people.id }).from(people).where(eq(people.email, 'ada@example.com'));
      await db.insert(webSessions).values([1, 2].map((n) => ({ id: `session-${n}`, personId: ada.id, expiresAt: sql`now() + interval '1 hour'` })));
      // One that has run out: deleted with them, not counted as signed in.
      await db.insert(webSessions).values({ id: 'session-stale', personId: ada.id, expiresAt: sql`now() - interval '1 minute'` });
    });
    const result = await runWithInput(['people', 'set-password', 'Ada@Example.com'], 'a-new-password-9\n', env);
    expect(result).toMatchObject({ code: 0, stdout: 'set the password of ada@example.com; signed out 2 web sessions\n' });
    expect(result.stdout + result.stderr).not.toContain('a-new-password-9');
    await withOrgDatabase(async (db) => {
      expect(await authenticate(db, 'ada@example.com', 'a-new-password-9')).toMatchObject({ email: 'ada@example.com' });
      expect(await authenticate(db, 'ada@example.com', 'ada-password-1')).toBeNull();
      expect(await db.select().from(webSessions)).toEqual([]);
    });
  });

  it.each([
    ['a password shorter than 8 characters', ['people', 'set-password', 'ada@example.com'], 'short\n', 'atrium: the new password must be at least 8 characters (the rule of ATRIUM_ADMIN_PASSWORD)'],
    ['no password on standard input', ['people', 'set-password', 'ada@example.com'], '', 'atrium: no password on standard input'],
    ['an email nobody has', ['people', 'set-password', 'nobody@example.com'], 'long-enough-1\n', 'atrium: no person with the email nobody@example.com in the organization'],
    ['the password as an argument', ['people', 'set-password', 'ada@example.com', 'long-enough-1'], '', 'atrium: usage: atrium people set-password EMAIL, the new password on standard input'],
  ])('refuses %s, in one line, changing nothing', { timeout: 60_000 }, async (_label, args, input, message) => {
    const result = await runWithInput(args, input, env);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining(message)]);
    await withOrgDatabase(async (db) => expect(await authenticate(db, 'ada@example.com', 'a-new-password-9')).not.toBeNull());
  });
});
