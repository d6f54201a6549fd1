/**
 * The data directory is owner-only (DESIGN section 1): a real `atrium serve` on a fresh directory, with a
 * umask that would leave files readable by everyone, must leave nothing readable or writable by group or
 * others — the embedded databases, the generated secrets and uploads alike; an existing loose directory is
 * tightened at start with a warning. The generated owner password is never printed, only its file.
 */
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serveAtrium, stopAtrium, type AtriumProcess } from '../helpers/atrium-process.js';
import { createScratchDatabase, engines } from '../helpers/databases.js';

/** Every entry under `root` (not following symlinks) that group or others may use, with its mode. */
async function openToOthers(root: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (entry: string) => {
    const info = await lstat(entry);
    if (info.isSymbolicLink()) return;
    if (info.mode & 0o077) found.push(`${path.relative(root, entry) || '.'} ${(info.mode & 0o777).toString(8)}`);
    if (info.isDirectory()) for (const name of await readdir(entry)) await visit(path.join(entry, name));
  };
  await visit(root);
  return found;
}

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const SECRET = 'data-dir-test-secret-0123456789';

describe.each(engines)('the data directory on %s', (engine) => {
  let dir: string;
  let running: AtriumProcess | undefined;
  let databaseEnv: NodeJS.ProcessEnv = {};
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    // The operator's umask lets everyone read new files; Atrium must not rely on it.
    process.umask(0o022);
    if (engine === 'postgres') {
      const scratch = await createScratchDatabase();
      databaseEnv = { DATABASE_URL: scratch.url };
      dropDatabase = scratch.drop;
    }
    return async () => {
      await dropDatabase?.();
    };
  });
  afterEach(async () => {
    await stopAtrium(running, 'SIGKILL');
    running = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('creates everything under a fresh data directory owner-only, and never prints the generated password', { timeout: 120_000 }, async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-datadir-'));
    const dataDir = path.join(dir, 'data');
    const served = await serveAtrium([], { ...databaseEnv, ATRIUM_DATA_DIR: dataDir, CONTENT_API_SECRET: SECRET }, ['content', 'org']);
    running = served;
    const upload = new FormData();
    upload.append('file', new Blob([PNG], { type: 'image/png' }), 'dot.png');
    upload.append('actor_id', 'tester');
    upload.append('actor_type', 'human');
    const uploaded = await fetch(`${served.urls.content}/assets/upload`, { method: 'POST', body: upload, headers: { authorization: `Bearer ${SECRET}` } });
    expect(uploaded.status).toBe(201);
    expect(await stopAtrium(running)).toBe(0);

    const passwordFile = path.join(dataDir, 'secrets', 'admin-password');
    const password = (await readFile(passwordFile, 'utf8')).trim();
    expect(running.output()).not.toContain(password);
    expect(running.output()).toContain(passwordFile);
    // A fresh directory is made owner-only from the start: nothing to tighten, nothing to warn about.
    expect(running.output()).not.toMatch(/were open to other users/);
    if (engine === 'pglite') expect((await readdir(path.join(dataDir, 'org'))).length).toBeGreaterThan(5);
    expect((await readdir(path.join(dataDir, 'assets', 'inline'))).length).toBe(1);
    expect(await openToOthers(dataDir)).toEqual([]);
  });

  it('tightens an existing data directory open to others at start, with a warning', { timeout: 120_000 }, async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-datadir-'));
    const dataDir = path.join(dir, 'data');
    await mkdir(path.join(dataDir, 'secrets'), { recursive: true, mode: 0o777 });
    await writeFile(path.join(dataDir, 'secrets', 'content-api-secret'), 'an-old-secret-from-a-loose-install\n', { mode: 0o666 });
    expect((await stat(path.join(dataDir, 'secrets', 'content-api-secret'))).mode & 0o077).not.toBe(0);

    running = await serveAtrium(['--only', 'content'], { ...databaseEnv, ATRIUM_DATA_DIR: dataDir }, ['content']);
    expect(await stopAtrium(running)).toBe(0);
    expect(running.output()).toMatch(/were open to other users; made them owner-only/);
    expect(await openToOthers(dataDir)).toEqual([]);
  });
});
