/**
 * `npm run bench:auth` — the authorization server and the protected org MCP endpoint:
 *
 * - token endpoint: authorization-code exchanges per second. Codes are made beforehand in the server
 *   process (authorization request + `approveAuthorizationRequest`, as consent would), then each request
 *   of the run redeems a different one, so every answer is a real exchange (PKCE check, single-use
 *   UPDATE, two token inserts);
 * - authenticated `service_context` calls per second and their p99: `tools/call` on an initialized MCP
 *   session with a bearer token from that flow (token verification, session lookup, the tool's queries).
 *
 * The org service runs in a child process of its own (this same file, forked), autocannon in this one.
 *
 *   npm run bench:auth [-- --exchanges 4000 --duration 10 --warmup 2 --connections 20 --engines pglite,postgres
 *                          --note TEXT --dry-run]
 *
 * PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL, in a scratch schema dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'drizzle-orm';
import { registerClient } from '../src/auth/clients.js';
import { mcpResource } from '../src/auth/resource.js';
import type { DatabaseConfig } from '../src/config.js';
import { createOrgService } from '../src/org/service.js';
import { dropSchema } from '../src/platform/database.js';
import { serveChild, startChild, type ChildServer } from './lib/child.js';
import { loadOptions, loadSettingsOf, measure, summarize, type LoadResult } from './lib/load.js';
import { benchEngines, benchOrgConfig, exchangeForm, type Engine, openOrgSession, prepareCode, probeTool, REDIRECT_URI, statusText } from './lib/org.js';
import { describeMachine, machineInfo } from './lib/machine.js';
import { formatTable, writeResultsSection } from './lib/report.js';

interface ServerOptions {
  database: DatabaseConfig;
  dataDir: string;
  /** Codes to prepare: the warm-up's and the measured run's. */
  codes: number;
}

interface ServerInfo {
  clientId: string;
  resource: string;
  codes: string[];
  /** An access token of the owner, for service_context. */
  accessToken: string;
}

// ---- child: the org service with prepared codes --------------------------------------------------------

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  serveChild<ServerOptions, ServerInfo>(async (options) => {
    const config = benchOrgConfig(options.database, options.dataDir);
    const service = await createOrgService(config);
    const url = await service.listen();
    config.publicUrl = url;
    config.authPublicUrl = url;
    const { ctx } = service;
    const [owner] = await ctx.database.rows<{ id: string }>(sql`SELECT id FROM people WHERE role = 'owner' LIMIT 1`);
    const client = await registerClient(ctx, { client_name: 'bench', redirect_uris: [REDIRECT_URI] });

    const codes: string[] = [];
    while (codes.length < options.codes + 1) codes.push(...(await Promise.all(Array.from({ length: 20 }, () => prepareCode(ctx, config, client.id, owner.id, 'service:ask memory:read')))));
    const [first, ...rest] = codes;
    const tokens = await fetch(`${url}/oauth/token`, { method: 'POST', body: exchangeForm(client.id, config, first) }).then((r) => r.json());
    if (!tokens.access_token) throw new Error(`token exchange failed: ${JSON.stringify(tokens)}`);
    return {
      url,
      info: { clientId: client.id, resource: mcpResource(config), codes: rest.slice(0, options.codes), accessToken: tokens.access_token },
      close: () => service.close(),
    };
  });
}

// ---- parent: load, measure, report ----------------------------------------------------------------------

interface Row {
  engine: Engine;
  name: string;
  result: LoadResult;
  connections: number;
}

if (!process.send) await main();

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: { exchanges: { type: 'string', default: '4000' }, ...loadOptions },
  });
  const exchanges = Number(args.exchanges);
  const settings = loadSettingsOf(args);
  const { engines, postgresUrl } = benchEngines(args.engines);
  const machine = machineInfo();
  console.log(`machine: ${describeMachine(machine)}`);

  const rows: Row[] = [];
  for (const engine of engines) rows.push(...(await runEngine(engine, postgresUrl, exchanges, settings)));

  const command = `npm run bench:auth -- --exchanges ${exchanges} --duration ${settings.duration} --warmup ${settings.warmup} --connections ${settings.connections} --engines ${engines.join(',')}`;
  const report = renderReport(rows, describeMachine(machine), command, exchanges, args.note);
  console.log(`\n${report}`);
  if (!args['dry-run']) {
    await writeResultsSection('auth', report);
    console.log('\nwritten to bench/RESULTS.md (section "auth")');
  }
}

async function runEngine(engine: Engine, postgresUrl: string | undefined, exchanges: number, settings: Parameters<typeof measure>[2]): Promise<Row[]> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-bench-auth-'));
  const schema = `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const database: DatabaseConfig = engine === 'pglite' ? { dataDir: path.join(dataDir, 'org'), schema: 'org' } : { url: postgresUrl, dataDir: '', schema };
  const warmupExchanges = Math.min(500, Math.ceil(exchanges / 5));
  console.log(`\n[${engine}] starting the org service and preparing ${exchanges + warmupExchanges} codes …`);
  let server: ChildServer<ServerInfo> | undefined;
  try {
    server = await startChild<ServerInfo>(fileURLToPath(import.meta.url), { database, dataDir, codes: exchanges + warmupExchanges } satisfies ServerOptions, {
      stdoutFile: path.join(dataDir, 'org.log'),
    });
    const { info, url } = server;
    const config = { publicUrl: url };

    console.log(`[${engine}] token endpoint: ${exchanges} code exchanges`);
    await exchangeCodes(url, info, info.codes.slice(0, warmupExchanges), settings.connections, config);
    const exchange = await exchangeCodes(url, info, info.codes.slice(warmupExchanges), settings.connections, config);

    console.log(`[${engine}] service_context: ${settings.duration} s`);
    const headers = await openOrgSession(url, info.accessToken, 'bench-auth');
    await probeTool(url, headers, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'service_context', arguments: {} } }), '"person"');
    const serviceContext = await measure(
      url,
      {
        method: 'POST',
        path: '/mcp',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'service_context', arguments: {} } }),
      },
      settings,
    );
    return [
      { engine, name: 'POST /oauth/token (authorization_code)', result: exchange, connections: settings.connections },
      { engine, name: 'POST /mcp tools/call service_context', result: serviceContext, connections: settings.connections },
    ];
  } finally {
    await server?.stop();
    if (database.url) await dropSchema(database.url, schema);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Redeems each code once: a fixed number of requests rather than a duration, since codes are single-use. */
async function exchangeCodes(url: string, info: ServerInfo, codes: string[], connections: number, config: { publicUrl: string }): Promise<LoadResult> {
  let next = 0;
  const result = await autocannon({
    url,
    connections,
    amount: codes.length,
    requests: [
      {
        method: 'POST',
        path: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        setupRequest: (request) => ({ ...request, body: exchangeForm(info.clientId, config, codes[next++ % codes.length]).toString() }),
      },
    ],
  });
  return summarize(result);
}

function renderReport(rows: Row[], machine: string, command: string, exchanges: number, note: string | undefined): string {
  return [
    '## auth — token endpoint and authenticated service_context',
    '',
    `Machine: ${machine}.`,
    '',
    `Command: \`${command}\` (PostgreSQL from \`BENCH_DATABASE_URL\` or \`TEST_DATABASE_URL\`, in a scratch schema dropped afterwards).`,
    '',
    `The org service runs in its own process with request logging on, as deployed; autocannon runs in another. Token row: ${exchanges.toLocaleString('en-US')} exchanges of distinct codes prepared beforehand through consent (after a warm-up of other codes); each checks PKCE S256, consumes the code with a conditional UPDATE and stores two token hashes. service_context row: \`tools/call\` on an initialized MCP session with a bearer token (token hash lookup, session lookup, the tool's queries), after a warm-up.`,
    ...(note ? ['', note] : []),
    '',
    formatTable(
      ['engine', 'case', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'statuses'],
      rows.map((row) => [row.engine, row.name, row.connections, row.result.rps, row.result.p50, row.result.p99, row.result.max, statusText(row.result)]),
    ),
  ].join('\n');
}
