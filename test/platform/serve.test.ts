import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const cli = path.resolve('bin/atrium.js');

interface Started {
  child: ChildProcess;
  urls: Record<string, string>;
  exited: Promise<number | null>;
}

/** Runs `atrium serve` as a real process and waits for each service's "listening on" line. */
async function serve(args: string[], dataDir: string, expected: string[]): Promise<Started> {
  const child = spawn(process.execPath, [cli, 'serve', ...args], {
    env: { ...process.env, ATRIUM_DATA_DIR: dataDir, CONTENT_PORT: '0', ORG_PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const urls: Record<string, string> = {};
  await new Promise<void>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (const match of buffer.matchAll(/"msg":"(\w+) service listening on (http:\/\/[^" ]+)/g)) urls[match[1]] = match[2];
      if (expected.every((name) => urls[name])) resolve();
    });
    void exited.then((code) => reject(new Error(`exited early with ${code}`)));
  });
  return { child, urls, exited };
}

describe('atrium serve', () => {
  let dataDir: string;
  let running: Started | undefined;
  afterEach(async () => {
    if (running && running.child.exitCode === null) running.child.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  // A first start creates two embedded databases (initdb and migrations): allow for a busy machine.
  it('runs both services on the embedded database and exits 0 on SIGTERM', { timeout: 120_000 }, async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-serve-'));
    running = await serve([], dataDir, ['content', 'org']);
    const content = await fetch(`${running.urls.content}/health`).then((response) => response.json());
    const org = await fetch(`${running.urls.org}/health`).then((response) => response.json());
    expect(content).toMatchObject({ ok: true, service: 'atrium-content' });
    expect(org).toMatchObject({ ok: true, service: 'atrium-org' });

    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
  });

  it('runs only the content service with --only content', { timeout: 120_000 }, async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-serve-'));
    running = await serve(['--only', 'content'], dataDir, ['content']);
    expect(Object.keys(running.urls)).toEqual(['content']);
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
  });
});
