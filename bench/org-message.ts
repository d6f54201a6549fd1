/**
 * `npm run bench:org-message` — agents at work (DESIGN 4.5): `message_agent` round trips per second with a
 * local agent answering at once, beside `service_context` calls per second in the same run and process.
 * Target on PostgreSQL: message round trips at least 0.3× service_context.
 *
 * A round trip is one `tools/call message_agent` with `wait_seconds: 20` that returns the succeeded
 * operation: the idempotency-free start (operation row, job, NOTIFY), a worker's claim, the signed webhook
 * POST to the example agent (examples/agent/index.js, which verifies the signature and answers 200
 * `{result}`), the completion, and the waiter's wake-up.
 *
 * The org service runs in a child process of its own (this file, forked), the example agent in another,
 * autocannon in this one.
 *
 *   npm run bench:org-message [-- --duration 10 --warmup 2 --connections 20 --engines pglite,postgres --note TEXT --dry-run]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { registerClient } from '../src/auth/clients.js';
import { mcpResource } from '../src/auth/resource.js';
import type { DatabaseConfig } from '../src/config.js';
import { upsertDeclaredAgent } from '../src/org/agents.js';
import { createOrgService } from '../src/org/service.js';
import { addSpaceMember, upsertSpace } from '../src/org/spaces.js';
import { dropSchema } from '../src/platform/database.js';
import { serveChild, startChild, type ChildServer } from './lib/child.js';
import { loadOptions, loadSettingsOf, measure, type LoadResult, type LoadSettings } from './lib/load.js';
import { describeMachine, machineInfo } from './lib/machine.js';
import { benchEngines, benchOrgConfig, exchangeForm, type Engine, openOrgSession, prepareCode, probeTool, REDIRECT_URI, statusText } from './lib/org.js';
import { formatTable, writeResultsSection } from './lib/report.js';

const AGENT_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

interface ServerOptions {
  database: DatabaseConfig;
  dataDir: string;
  agentUrl: string;
  agentSecret: string;
}

interface ServerInfo {
  accessToken: string;
  agentId: string;
  spaceId: string;
}

// ---- child: the org service with one agent, one space and a token -----------------------------------------

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  serveChild<ServerOptions, ServerInfo>(async (options) => {
    const config = benchOrgConfig(options.database, options.dataDir, {
      resolveSecret: (name) => (name === 'BENCH_AGENT_SECRET' ? options.agentSecret : undefined),
    });
    const service = await createOrgService(config);
    const url = await service.listen();
    config.publicUrl = url;
    config.authPublicUrl = url;
    const { ctx } = service;
    const [owner] = await ctx.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE role = 'owner' LIMIT 1`);
    await upsertDeclaredAgent(ctx.db, {
      key: 'bench',
      name: 'Bench agent',
      description: 'answers at once',
      autonomy: 2,
      responsiblePersonId: owner.id,
      budget: null,
      delivery: { kind: 'webhook', url: options.agentUrl, secret_env: 'BENCH_AGENT_SECRET' },
    });
    const [agent] = await ctx.database.rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'bench'`);
    const { space } = await upsertSpace(ctx.db, { key: 'bench', name: 'Bench' });
    await addSpaceMember(ctx.db, space.id, owner.id);

    const client = await registerClient(ctx, { client_name: 'bench', redirect_uris: [REDIRECT_URI] });
    const code = await prepareCode(ctx, config, client.id, owner.id, 'service:ask agents:message');
    const tokens = await fetch(`${url}/oauth/token`, { method: 'POST', body: exchangeForm(client.id, config, code) }).then((response) => response.json());
    if (!tokens.access_token) throw new Error(`token exchange failed: ${JSON.stringify(tokens)}`);
    return { url, info: { accessToken: tokens.access_token, agentId: agent.id, spaceId: space.id }, close: () => service.close() };
  });
}

// ---- parent ----------------------------------------------------------------------------------------------

interface Row {
  engine: Engine;
  name: string;
  result: LoadResult;
  succeeded?: string;
}

if (!process.send) await main();

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: loadOptions,
  });
  const settings = loadSettingsOf(args);
  const { engines, postgresUrl } = benchEngines(args.engines);
  const machine = machineInfo();
  console.log(`machine: ${describeMachine(machine)}`);

  const agent = await startExampleAgent();
  const rows: Row[] = [];
  try {
    for (const engine of engines) rows.push(...(await runEngine(engine, postgresUrl, agent.url, settings)));
  } finally {
    agent.stop();
  }
  const command = `npm run bench:org-message -- --duration ${settings.duration} --warmup ${settings.warmup} --connections ${settings.connections} --engines ${engines.join(',')}`;
  const report = renderReport(rows, describeMachine(machine), command, args.note);
  console.log(`\n${report}`);
  if (!args['dry-run']) {
    await writeResultsSection('org-message', report);
    console.log('\nwritten to bench/RESULTS.md (section "org-message")');
  }
}

/** The example agent, as a user runs it, on a free port. */
async function startExampleAgent(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [path.resolve('examples/agent/index.js')], {
    env: { ...process.env, PORT: '0', AGENT_SECRET },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve) =>
    lines.on('line', (line) => {
      const entry = JSON.parse(line);
      if (entry.event === 'listening') resolve(entry.port);
    }),
  );
  return { url: `http://127.0.0.1:${port}/`, stop: () => void child.kill('SIGTERM') };
}

async function runEngine(engine: Engine, postgresUrl: string | undefined, agentUrl: string, settings: LoadSettings): Promise<Row[]> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-bench-org-message-'));
  const schema = `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const database: DatabaseConfig = engine === 'pglite' ? { dataDir: path.join(dataDir, 'org'), schema: 'org' } : { url: postgresUrl, dataDir: '', schema };
  console.log(`\n[${engine}] starting the org service …`);
  let server: ChildServer<ServerInfo> | undefined;
  try {
    server = await startChild<ServerInfo>(fileURLToPath(import.meta.url), { database, dataDir, agentUrl, agentSecret: AGENT_SECRET } satisfies ServerOptions, {
      stdoutFile: path.join(dataDir, 'org.log'),
    });
    const { info, url } = server;
    const headers = await openOrgSession(url, info.accessToken, 'bench-org-message');
    const call = (name: string, args: Record<string, unknown>) =>
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    const messageArgs = { agent_id: info.agentId, text: 'ping', space_id: info.spaceId, wait_seconds: 20 };
    await probeTool(url, headers, call('message_agent', messageArgs), '"status":"succeeded"');

    console.log(`[${engine}] service_context: ${settings.duration} s`);
    const serviceContext = await measure(url, { method: 'POST', path: '/mcp', headers, body: call('service_context', {}) }, settings);
    console.log(`[${engine}] message_agent: ${settings.duration} s`);
    const message = await measure(url, { method: 'POST', path: '/mcp', headers, body: call('message_agent', messageArgs) }, settings);
    const counts = await countOperations(database);
    return [
      { engine, name: 'tools/call service_context', result: serviceContext },
      { engine, name: 'tools/call message_agent → succeeded', result: message, succeeded: counts },
    ];
  } finally {
    await server?.stop();
    if (database.url) await dropSchema(database.url, schema);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** How the run's message operations ended (a row that did not all succeed measured the wrong thing). */
async function countOperations(database: DatabaseConfig): Promise<string> {
  if (!database.url) return 'n/a';
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT status, count(*)::int AS n FROM "${database.schema}".operations WHERE kind = 'message' GROUP BY status ORDER BY status`);
    return rows.map((row) => `${row.status}×${row.n}`).join(' ');
  } finally {
    await client.end();
  }
}

function renderReport(rows: Row[], machine: string, command: string, note: string | undefined): string {
  const ratios = [...new Set(rows.map((row) => row.engine))].map((engine) => {
    const [context, message] = ['tools/call service_context', 'tools/call message_agent → succeeded'].map(
      (name) => rows.find((row) => row.engine === engine && row.name === name)!.result.rps,
    );
    return `${engine}: message_agent round trips at ${(message / context).toFixed(2)}× service_context (target ≥ 0.3× on PostgreSQL)`;
  });
  return [
    '## org-message — message_agent round trips beside service_context',
    '',
    `Machine: ${machine}.`,
    '',
    `Command: \`${command}\` (PostgreSQL from \`BENCH_DATABASE_URL\` or \`TEST_DATABASE_URL\`, in a scratch schema dropped afterwards).`,
    '',
    'The org service runs in its own process with request logging on; the example agent (examples/agent/index.js, verifying each signature and answering 200 `{result}` at once) in another; autocannon in a third. A message row is one `tools/call message_agent` with `wait_seconds: 20` answered with the succeeded operation: start (operation row, job, NOTIFY), a worker claim, the signed POST, completion and the waiter\'s wake-up. Each case after a warm-up.',
    ...(note ? ['', note] : []),
    '',
    formatTable(
      ['engine', 'case', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'statuses', 'operations'],
      rows.map((row) => [row.engine, row.name, row.result.rps, row.result.p50, row.result.p99, row.result.max, statusText(row.result), row.succeeded ?? '']),
    ),
    '',
    ...ratios,
  ].join('\n');
}
