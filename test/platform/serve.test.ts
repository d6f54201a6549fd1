import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const cli = path.resolve('bin/atrium.js');

interface Started {
  child: ChildProcess;
  urls: Record<string, string>;
  exited: Promise<number | null>;
  /** Everything printed so far, one JSON log line each. */
  output(): string;
}

/** Runs `atrium serve` as a real process and waits for each service's banner ("… (listening on ADDRESS)"). */
async function serve(args: string[], dataDir: string, expected: string[], logLevel = 'info'): Promise<Started> {
  const child = spawn(process.execPath, [cli, 'serve', ...args], {
    env: { ...process.env, ATRIUM_DATA_DIR: dataDir, CONTENT_PORT: '0', ORG_PORT: '0', LOG_LEVEL: logLevel, LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const urls: Record<string, string> = {};
  let buffer = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (const match of buffer.matchAll(/"msg":"(\w+) service at \S+ \(listening on ([\d.:]+)\)/g)) urls[match[1]] = `http://${match[2]}`;
      if (expected.every((name) => urls[name])) resolve();
    });
    void exited.then((code) => reject(new Error(`exited early with ${code}`)));
  });
  return { child, urls, exited, output: () => buffer };
}

describe('atrium serve', () => {
  // One data directory for the file: the first test is a first start (the embedded database created, secrets and
  // the owner's password generated), the others start again on what it left, as a person's next `npm start` does.
  let dataDir: string;
  let running: Started | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-serve-'));
  });
  afterEach(() => {
    if (running && running.child.exitCode === null) running.child.kill('SIGKILL');
  });
  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  // A first start creates the embedded database (initdb and both services' migrations): allow for a busy machine.
  it('runs both services on a first start, names both MCP endpoints on their public origins, announces the generated secrets as information, and exits 0 on SIGTERM', { timeout: 120_000 }, async () => {
    running = await serve([], dataDir, ['content', 'org']);
    const content = await fetch(`${running.urls.content}/health`).then((response) => response.json());
    const org = await fetch(`${running.urls.org}/health`).then((response) => response.json());
    expect(content).toMatchObject({ ok: true, service: 'atrium-content' });
    expect(org).toMatchObject({ ok: true, service: 'atrium-org' });

    const lines = logLines(running.output());
    const banner = (service: string) => lines.find((line) => line.msg.startsWith(`${service} service at `))!.msg;
    const orgOrigin = `http://localhost:${new URL(running.urls.org).port}`;
    const contentOrigin = `http://localhost:${new URL(running.urls.content).port}`;
    const contentSecret = path.join(dataDir, 'secrets', 'content-api-secret');
    expect(banner('org')).toContain(`org service at ${orgOrigin} (listening on 127.0.0.1:`);
    expect(banner('org')).toContain(`MCP ${orgOrigin}/mcp (OAuth; set-up for each client on ${orgOrigin}/connect)`);
    expect(banner('content')).toContain(`content service at ${contentOrigin} (listening on 127.0.0.1:`);
    expect(banner('content')).toContain(`MCP ${contentOrigin}/mcp (bearer token: the content API secret, in ${contentSecret})`);
    // Every URL a person may copy is on the public origin.
    for (const service of ['org', 'content']) expect(banner(service)).not.toMatch(/https?:\/\/127\.0\.0\.1/);
    const generated = generatedLines(lines);
    expect(generated.map((line) => [line.level, line.msg.split(',')[0]])).toEqual(
      expect.arrayContaining([
        [30, 'generated CONTENT_API_SECRET'],
        [30, 'created the owner admin@example.com with a generated password'],
      ]),
    );
    expect(generated).toHaveLength(2);

    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
  });

  it('runs only the content service with --only content, on the data directory it made before', { timeout: 120_000 }, async () => {
    running = await serve(['--only', 'content'], dataDir, ['content']);
    expect(Object.keys(running.urls)).toEqual(['content']);
    expect((await fetch(`${running.urls.content}/health`)).status).toBe(200);
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    // The secret made on the first start is kept, not made again.
    expect(generatedLines(logLines(running.output()))).toEqual([]);
    // At `info` (the default) a request leaves no line: the log is about the service, not its traffic.
    expect(requestLines(running.output())).toEqual([]);
  });

  it('logs one line per request at debug, with its method, path, status and time', { timeout: 120_000 }, async () => {
    running = await serve(['--only', 'content'], dataDir, ['content'], 'debug');
    expect((await fetch(`${running.urls.content}/health`)).status).toBe(200);
    expect((await fetch(`${running.urls.content}/no-such-route`)).status).toBe(404);
    // The second read is answered from the public read cache, before routing: logged all the same.
    for (let read = 0; read < 2; read += 1) expect((await fetch(`${running.urls.content}/blog?limit=1`)).status).toBe(200);
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    const lines = requestLines(running.output());
    expect(lines.map(({ method, url, status }) => ({ method, url, status }))).toEqual([
      { method: 'GET', url: '/health', status: 200 },
      { method: 'GET', url: '/no-such-route', status: 404 },
      { method: 'GET', url: '/blog?limit=1', status: 200 },
      { method: 'GET', url: '/blog?limit=1', status: 200 },
    ]);
    for (const line of lines) expect(line.ms).toBeGreaterThanOrEqual(0);
  });
});

/** A process's JSON log, a line each. */
function logLines<Line extends { msg: string } = { level: number; msg: string }>(output: string): Line[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}

/** The lines that announce a generated secret or password. */
function generatedLines(lines: Array<{ level: number; msg: string }>): Array<{ level: number; msg: string }> {
  return lines.filter((line) => /generated (CONTENT_API_SECRET|password)/.test(line.msg));
}

/** The request lines (`msg: "request"`) of a process's JSON log. */
function requestLines(output: string): Array<{ method: string; url: string; status: number; ms: number }> {
  return logLines<{ msg: string; method: string; url: string; status: number; ms: number }>(output).filter((line) => line.msg === 'request');
}
