import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVING_NODE_FLAGS } from '../../bench/lib/child.js';
import { compile, compiledEntry, sourcesFingerprint } from '../../bin/compiled.js';

/**
 * `npm start` runs the compiled tree (bin/compiled.js: src/ compiled file by file into dist/); bin/atrium.js runs
 * it only while it matches src/.
 */
describe('the compiled tree npm start runs', () => {
  const dirs: string[] = [];
  afterAll(async () => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));
  const temporary = async (prefix: string) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };

  it('has a fingerprint of the sources that changes when a file is edited, touched or added', async () => {
    const dir = await temporary('atrium-fingerprint-');
    await writeFile(path.join(dir, 'a.ts'), 'export const a = 1;\n');
    const first = sourcesFingerprint(dir);
    expect(sourcesFingerprint(dir)).toBe(first);
    await writeFile(path.join(dir, 'a.ts'), 'export const a = 2;\n');
    const edited = sourcesFingerprint(dir);
    expect(edited).not.toBe(first);
    await utimes(path.join(dir, 'a.ts'), new Date(), new Date(Date.now() + 5_000));
    const touched = sourcesFingerprint(dir);
    expect(touched).not.toBe(edited);
    await writeFile(path.join(dir, 'b.css'), 'p {}\n');
    expect(sourcesFingerprint(dir)).not.toBe(touched);
  });

  it('runs with the same V8 flags from npm start, the atrium command and the benchmarks', async () => {
    const start = (JSON.parse(await readFile('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts.start;
    const shebang = (await readFile('bin/atrium.js', 'utf8')).split('\n')[0];
    const flags = (line: string) => line.split(' ').filter((word) => word.startsWith('--'));
    expect(flags(start)).toEqual(SERVING_NODE_FLAGS);
    expect(flags(shebang)).toEqual(SERVING_NODE_FLAGS);
  });

  // Compiling and two starts on a new embedded database: allow for a busy machine.
  it('serves both services from dist/, its assets included, on a first start and a restart', { timeout: 180_000 }, async () => {
    await compile();
    const entry = compiledEntry();
    expect(entry).toBe(new URL('../../dist/cli.js', import.meta.url).href);
    // Nothing is compiled again while the sources are unchanged.
    expect(await compile()).toBe(false);

    const dataDir = await temporary('atrium-compiled-');
    for (const start of ['first start', 'restart']) {
      const child = spawn(process.execPath, [fileURLToPath(entry!), 'serve'], {
        env: { ...process.env, ATRIUM_DATA_DIR: dataDir, CONTENT_PORT: '0', ORG_PORT: '0', LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const urls: Record<string, string> = {};
      let output = '';
      await new Promise<void>((resolve, reject) => {
        for (const stream of [child.stdout!, child.stderr!]) {
          stream.on('data', (chunk: Buffer) => {
            output += chunk.toString();
            for (const match of output.matchAll(/"msg":"(\w+) service at \S+ \(listening on ([\d.:]+)\)/g)) urls[match[1]] = `http://${match[2]}`;
            if (urls.org && urls.content) resolve();
          });
        }
        void exited.then((code) => reject(new Error(`${start}: exited with ${code}\n${output}`)));
      });
      expect(await fetch(`${urls.org}/health`).then((response) => response.json())).toMatchObject({ ok: true, service: 'atrium-org' });
      expect(await fetch(`${urls.content}/health`).then((response) => response.json())).toMatchObject({ ok: true, service: 'atrium-content' });
      // A page and the stylesheet copied beside the compiled modules.
      const signIn = await fetch(`${urls.org}/signin`);
      expect(signIn.status).toBe(200);
      expect(await signIn.text()).toContain('<form');
      const stylesheet = await fetch(`${urls.org}/assets/console.css`);
      expect(stylesheet.status).toBe(200);
      expect(await stylesheet.text()).toBe(await readFile(new URL('../../src/org/web/assets/console.css', import.meta.url), 'utf8'));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});
