/** `npx atrium org apply FILE` as an operator runs it: a child process, exit codes and what it prints. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, engines } from '../helpers/databases.js';

const run = promisify(execFile);
const cli = path.resolve('bin/atrium.js');

describe.each(engines)('atrium org apply on %s', (engine) => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-cli-'));
    env = { PATH: process.env.PATH, HOME: process.env.HOME, ATRIUM_DATA_DIR: path.join(dir, 'data'), ADA_PASSWORD: 'ada-password-1' };
    if (engine === 'postgres') {
      const scratch = await createScratchDatabase();
      env.ORG_DATABASE_URL = scratch.url;
      dropDatabase = scratch.drop;
    }
    await writeFile(
      path.join(dir, 'org.yaml'),
      `organization: { name: Example Co }
people: [{ email: ada@example.com, name: Ada, role: owner, password_env: ADA_PASSWORD }]
spaces: [{ key: web, name: Website, members: [ada@example.com] }]
`,
    );
    await writeFile(path.join(dir, 'bad.yaml'), 'people: [{ email: not-an-email, name: X }]\n');
  });
  afterAll(async () => {
    await dropDatabase?.();
    await rm(dir, { recursive: true, force: true });
  });

  it('applies the file, then applies it again without creating anything', { timeout: 120_000 }, async () => {
    const first = await run('node', [cli, 'org', 'apply', path.join(dir, 'org.yaml')], { env });
    expect(first.stdout).toContain('people: 1 created (ada@example.com), 0 updated, 0 unchanged');
    expect(first.stdout).toContain('spaces: 1 created (web), 0 updated, 0 unchanged');
    const second = await run('node', [cli, 'org', 'apply', path.join(dir, 'org.yaml')], { env });
    expect(second.stdout).toContain('people: 0 created, 0 updated, 1 unchanged (ada@example.com)');
    expect(second.stdout).toContain('spaces: 0 created, 0 updated, 1 unchanged (web)');
  });

  it('refuses a password shorter than ATRIUM_ADMIN_PASSWORD allows', { timeout: 60_000 }, async () => {
    const failure = await run('node', [cli, 'org', 'apply', path.join(dir, 'org.yaml')], { env: { ...env, ADA_PASSWORD: 'x' } }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('ADA_PASSWORD (the password of ada@example.com) must be at least 8 characters');
    expect(failure?.stderr).not.toMatch(/^\s+at /m);
  });

  it('exits 1 on an invalid file, naming the problem', { timeout: 60_000 }, async () => {
    const failure = await run('node', [cli, 'org', 'apply', path.join(dir, 'bad.yaml')], { env }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('people.0.email: Invalid email address');
  });
});
