/**
 * DESIGN 4.4 and 6: operations live in the database and run from the durable job queue, so any process may
 * run one another process started, and a process killed mid-run loses nothing — another start picks the
 * work up once its lease has passed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrgConfig } from '../../src/config.js';
import { orgTools } from '../../src/org/mcp/server.js';
import { engines, postgresUrl, testDatabase, type Engine, type TestDatabase } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import { sendRequest } from '../helpers/http.js';
import { RUN_MS, startTool, testKind } from '../helpers/test-work.js';
import { connectClient } from '../helpers/oauth-flow.js';
import { connectOrgMcp, openOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.runIf(postgresUrl)('operations across two org processes on one PostgreSQL database', () => {
  let database: TestDatabase;
  let a: TestOrg;
  let b: TestOrg;
  let client: OrgMcp;
  beforeAll(async () => {
    database = testDatabase('postgres');
    a = await startOrg('postgres', { database, mcpTools: [...orgTools, startTool], operationKinds: [testKind('a')] });
    b = await startOrg('postgres', {
      database,
      config: { publicUrl: a.url, authPublicUrl: a.url },
      mcpTools: [...orgTools, startTool],
      operationKinds: [testKind('b')],
    });
    client = await connectOrgMcp(a);
  });
  afterAll(async () => {
    await client?.close();
    await b?.close();
    await a?.close();
    await database?.drop();
  });

  it('finishes on one process an operation started on the other, and the waiting caller hears of it', async () => {
    // Process a takes no more jobs: only b can run the work a's caller is waiting for.
    await a.service.jobs.stop();
    const spaceId = (await client.callOk('service_context')).spaces[0].id;
    const operation = await client.callOk('test_start', { text: 'cross', space_id: spaceId, wait_seconds: 20 });
    expect(operation).toMatchObject({ status: 'succeeded', result: { echo: 'cross', by: 'b' } });
  });
});

/** An org service in a child process, so the test can SIGKILL it. */
async function spawnOrg(config: { database: OrgConfig['database']; dataDir: string; leaseSeconds: number; port: number }) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '../helpers/org-process.ts'), JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`org process exited with ${code}`)));
  });
  const { url } = JSON.parse(line) as { url: string };
  // Just enough of a TestOrg for the OAuth helpers.
  const org = {
    url,
    config: { publicUrl: url, authPublicUrl: url },
    request: (method: string, route: string, options?: object) => sendRequest(url + route, method, options, 'manual'),
  } as unknown as TestOrg;
  return { child, org };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe.each(engines)('an org process killed mid-run on %s', (engine: Engine) => {
  let database: TestDatabase;
  let dataDir: string;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-kill-'));
    database = testDatabase(engine);
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) await killed(child);
    if (engine === 'postgres') await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('loses nothing: after a restart the work is picked up again and finishes', { timeout: 90_000 }, async () => {
    const databaseConfig =
      engine === 'pglite' ? { dataDir: path.join(dataDir, 'org'), schema: 'org' } : database.config;
    // The restart keeps the address: tokens are bound to the resource URL they were issued for.
    const config = { database: databaseConfig, dataDir, leaseSeconds: 5, port: await freePort() };
    const first = await spawnOrg(config);
    children.push(first.child);
    const connected = await connectClient(first.org, { scopes: [] });
    let client = await openOrgMcp(first.org, connected);
    const spaceId = (await client.callOk('service_context')).spaces[0].id;
    const started = await client.callOk('test_start', { text: 'survive', mode: 'slow', space_id: spaceId, wait_seconds: 0 });
    const running = await waitFor(
      () => client.callOk('get_operation', { operation_id: started.operation_id }),
      (operation) => operation.status !== 'queued',
    );
    expect(running.status).toBe('running');
    await client.close();
    await killed(first.child);

    const second = await spawnOrg(config);
    children.push(second.child);
    client = await openOrgMcp(second.org, connected);
    const finished = await waitFor(
      () => client.callOk('get_operation', { operation_id: started.operation_id }),
      (operation) => operation.status === 'succeeded',
      config.leaseSeconds * 1000 + RUN_MS + 10_000,
    );
    expect(finished).toMatchObject({ status: 'succeeded', result: { echo: 'survive', by: `process ${second.child.pid}` } });
    await client.close();
  });
});
