import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/run-cli.js';

/** One line on stderr naming the problem, exit code 1, no stack trace. */
function expectOneLineError(result: CliResult, message: string | RegExp): void {
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(typeof message === 'string' ? `atrium: ${message}` : message);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

describe('atrium reports common mistakes in one line', () => {
  let dataDir: string;
  let occupied: Server;
  let occupiedPort: number;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-cli-errors-'));
    occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
    occupiedPort = (occupied.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => occupied.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('names an unknown command', async () => {
    expectOneLineError(await runCli(['frobnicate']), "unknown command 'frobnicate'; run `atrium help` for the list");
  });

  it('names an unknown option', async () => {
    expectOneLineError(await runCli(['serve', '--verbose']), 'unknown option --verbose (see atrium help)');
  });

  it('refuses a public URL without a scheme, naming the variable', async () => {
    expectOneLineError(await runCli(['serve'], { ORG_PUBLIC_URL: 'localhost:8080' }), /ORG_PUBLIC_URL: must start with http:\/\/ or https:\/\//);
  });

  it('names an organization file that does not exist', async () => {
    expectOneLineError(await runCli(['org', 'apply', path.join(dataDir, 'missing.yaml')], { ATRIUM_DATA_DIR: dataDir }), /missing\.yaml does not exist$/);
  });

  it('names the variable and the service when the database does not answer', async () => {
    const result = await runCli(['serve', '--only', 'content'], { CONTENT_DATABASE_URL: 'postgres://atrium:secret@127.0.0.1:1/atrium' });
    expectOneLineError(result, /^atrium: content service: the database at CONTENT_DATABASE_URL=postgres:\/\/atrium:\*\*\*@127\.0\.0\.1:1\/atrium does not answer/);
  });

  // Starts on an embedded database: its first start creates it.
  it('names the variable to set when a port is in use', { timeout: 120_000 }, async () => {
    const result = await runCli(['serve', '--only', 'content'], { ATRIUM_DATA_DIR: dataDir, CONTENT_PORT: String(occupiedPort) });
    expectOneLineError(result, `content service: port ${occupiedPort} is already in use on 127.0.0.1; set CONTENT_PORT to a free port (or stop what uses it)`);
  });

  // Starts on an embedded database: its first start creates it.
  it('says when HOST does not resolve', { timeout: 120_000 }, async () => {
    const result = await runCli(['serve', '--only', 'content'], { ATRIUM_DATA_DIR: dataDir, CONTENT_PORT: '0', HOST: 'no-such-host.invalid' });
    expectOneLineError(result, /HOST no-such-host\.invalid does not resolve/);
  });

  // Starts on an embedded database: its first start creates it.
  it('stops the content service and exits 1 when the org service cannot start', { timeout: 120_000 }, async () => {
    const result = await runCli(['serve'], {
      ATRIUM_DATA_DIR: dataDir,
      CONTENT_PORT: '0',
      ORG_PORT: '0',
      ATRIUM_ORG_FILE: path.join(dataDir, 'org.yaml'),
    });
    expectOneLineError(result, /org\.yaml \(ATRIUM_ORG_FILE\) does not exist$/);
  });
});
