/**
 * `npm run bench:mcp` — tools/call round trips per second and latency of the content MCP server
 * for get_blog_post, list_blog_posts and search_content, over one session and over 50 concurrent
 * sessions, next to a bare SDK server (the SDK's own stateful transport with in-memory sessions, one tool
 * answering a constant) measured in the same run with the same load. Target (issue 22): get_blog_post at
 * ≥ 0.85× the bare server's rate.
 *
 * Every call is a full MCP round trip: POST /mcp with the session header and a JSON-RPC `tools/call`, answered
 * as one JSON body (both servers, both asked with `Accept: application/json, text/event-stream`). The content
 * service pays for what the bare server does not have: the bearer check, the session lookup (in memory after its
 * first read, kept exact by the change feed), a fresh per-request Server and JsonExchange, argument validation and
 * the domain read (from the domain read cache after the first call, since every call reads the same post).
 *
 * Also measured: get_asset_upload_url, a tool with no database work behind it, which isolates what the MCP
 * serving layer itself costs; and, in the content service's process, the cost of what each request builds
 * (Server, handlers, JsonExchange, connect and close) — tool definitions and JSON Schemas are built once at start-up.
 *
 *   npm run bench:mcp [-- --duration 10 --warmup 2 --connections 50 --sessions 50 --engines pglite,postgres
 *                         --tools get_blog_post,list_blog_posts,search_content,get_asset_upload_url
 *                         --posts 10000 --items 1000 --cpu-prof DIR --note TEXT --dry-run]
 *
 * PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL, in a scratch schema dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { JsonExchange } from '../src/platform/mcp/json-exchange.js';
import type { ContentConfig, DatabaseConfig } from '../src/config.js';
import { contentMcpEndpoint } from '../src/content/mcp/server.js';
import { createContentService } from '../src/content/service.js';
import { dropSchema } from '../src/platform/database.js';
import { createServerFactory } from '../src/platform/mcp/endpoint.js';
import { startBareMcpServer } from './lib/bare-mcp.js';
import { serveChild, startChild, type ChildServer } from './lib/child.js';
import { seedContent, type SeedFacts, type SeedOptions } from './lib/content-seed.js';
import { measure, type LoadCase, type LoadResult, type LoadSettings } from './lib/load.js';
import { describeMachine, machineInfo } from './lib/machine.js';
import { formatTable, writeResultsSection } from './lib/report.js';

const thisFile = fileURLToPath(import.meta.url);
const SECRET = 'bench-mcp-secret-0123456789abcdef';
const PROTOCOL = '2025-03-26';
const RATIO_TARGET = 0.85;

type Engine = 'pglite' | 'postgres';

// ---------------------------------------------------------------------------------------------------------
// The child process: the content service, seeded (the bare SDK server is bench/lib/bare-mcp.ts).

type ChildOptions = { database: DatabaseConfig; dataDir: string; seed: SeedOptions };

interface ContentInfo {
  facts: SeedFacts;
  /** Microseconds to build, connect and close one request's Server and transport. */
  perRequestMicros: number;
}

if (process.send && process.argv[1] === thisFile) {
  serveChild<ChildOptions, ContentInfo>(serveContent);
}

async function serveContent(options: ChildOptions) {
  const config: ContentConfig = {
    host: '127.0.0.1',
    port: 0,
    publicUrl: 'http://127.0.0.1',
    database: options.database,
    apiSecret: SECRET,
    dataDir: options.dataDir,
    assetDir: path.join(options.dataDir, 'assets'),
    revalidate: {},
    // As deployed (request lines are at debug, so none per request; the parent sends the log to a file).
    logLevel: 'info',
  };
  const service = await createContentService(config);
  const facts = await seedContent(service.ctx.database, options.seed);
  const url = await service.listen();
  config.publicUrl = url;
  return { url, info: { facts, perRequestMicros: await perRequestCost(service.ctx) }, close: () => service.close() };
}

/** The per-request construction the endpoint does, timed in a loop (after a warm-up). */
async function perRequestCost(ctx: Parameters<typeof contentMcpEndpoint>[0]): Promise<number> {
  const newServer = createServerFactory(contentMcpEndpoint(ctx));
  const client = { protocolVersion: PROTOCOL, name: 'bench', version: null, capabilities: {} };
  const once = async () => {
    const server = newServer({ client, principal: undefined, http: {} });
    await server.connect(new JsonExchange([]));
    await server.close();
  };
  for (let i = 0; i < 2_000; i++) await once();
  const rounds = 20_000;
  const started = performance.now();
  for (let i = 0; i < rounds; i++) await once();
  return Math.round(((performance.now() - started) / rounds) * 1000 * 10) / 10;
}

// ---------------------------------------------------------------------------------------------------------
// The parent: sessions, load, report.

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    sessions: { type: 'string', default: '50' },
    engines: { type: 'string', default: 'pglite,postgres' },
    posts: { type: 'string', default: '10000' },
    items: { type: 'string', default: '1000' },
    tools: { type: 'string', default: 'get_blog_post,list_blog_posts,search_content,get_asset_upload_url' },
    'cpu-prof': { type: 'string' },
    note: { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
  },
});

const settings: LoadSettings = {
  duration: Number(args.duration),
  warmup: Number(args.warmup),
  connections: Number(args.connections),
  pipelining: 1,
};
const manySessions = Number(args.sessions);
const tools = args.tools.split(',');
const seed = { posts: Number(args.posts), items: Number(args.items) };
const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;

interface Row {
  server: 'bare SDK' | 'atrium-content';
  tool: string;
  sessions: number;
  result: LoadResult;
}

interface EngineRun {
  engine: Engine;
  rows: Row[];
  perRequestMicros: number;
  facts: SeedFacts;
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const requested = args.engines.split(',') as Engine[];
  const engines = requested.filter((engine) => engine === 'pglite' || (engine === 'postgres' && postgresUrl));
  if (requested.includes('postgres') && !engines.includes('postgres')) console.warn('PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL');
  console.log(`machine: ${describeMachine(machine)}`);
  console.log(`settings: ${JSON.stringify(settings)}, ${manySessions} sessions, data: ${seed.posts} posts, ${seed.items} roadmap items\n`);

  const runs: EngineRun[] = [];
  for (const engine of engines) runs.push(await benchEngine(engine));

  const report = renderReport(runs, describeMachine(machine), Math.round(os.loadavg()[0] * 100) / 100);
  console.log(`\n${report}`);
  if (!args['dry-run']) {
    await writeResultsSection('mcp', report);
    console.log('\nwritten to bench/RESULTS.md (section "mcp")');
  }
}

async function benchEngine(engine: Engine): Promise<EngineRun> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `atrium-bench-mcp-${engine}-`));
  const schema = `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const database: DatabaseConfig =
    engine === 'pglite' ? { dataDir: path.join(dataDir, 'content'), schema: 'content' } : { url: postgresUrl, dataDir: '', schema };
  const logFile = path.join(os.tmpdir(), `atrium-bench-mcp-${engine}.log`);
  console.log(`[${engine}] starting the content service and loading ${seed.posts} posts, ${seed.items} items…`);
  const content = await startChild<ContentInfo>(thisFile, { database, dataDir, seed } satisfies ChildOptions, {
    stdoutFile: logFile,
    cpuProfDir: args['cpu-prof'] ? path.resolve(args['cpu-prof'], engine) : undefined,
  });
  let bare: ChildServer<null> | undefined;
  try {
    const { facts, perRequestMicros } = content.info;
    console.log(`[${engine}] loaded in ${facts.seconds} s; per-request Server + JsonExchange: ${perRequestMicros} µs; log ${logFile}`);
    const [post] = (await (await fetch(`${content.url}/blog?limit=1`)).json()).posts as Array<{ slug: string }>;
    // The bare tool answers the same bytes get_blog_post answers, so the two differ only in the work behind them.
    const postJson = await (await fetch(`${content.url}/blog/${post.slug}`)).text();
    bare = await startBareMcpServer(postJson);

    const rows: Row[] = [];
    const run = async (server: Row['server'], url: string, tool: string, toolArgs: Record<string, unknown>, sessions: string[], auth: boolean) => {
      const loadCase = toolCallCase(tool, toolArgs, sessions, auth);
      await expectToolResult(url, loadCase);
      const result = await measure(url, loadCase, settings);
      rows.push({ server, tool, sessions: sessions.length, result });
      const other = Object.entries(result.statuses).filter(([code]) => code !== '200');
      console.log(`[${engine}] ${server} ${tool}, ${sessions.length} session(s): ${result.rps} calls/s, p99 ${result.p99} ms${other.length ? ` UNEXPECTED ${JSON.stringify(other)}` : ''}`);
    };

    for (const count of [1, manySessions]) {
      const bareSessions = await openSessions(bare.url, count, false);
      await run('bare SDK', bare.url, 'constant', {}, bareSessions, false);
      const sessions = await openSessions(content.url, count, true);
      const toolArgs: Record<string, Record<string, unknown>> = {
        get_blog_post: { slug: post.slug },
        list_blog_posts: {},
        search_content: { query: facts.search.common.word },
        get_asset_upload_url: {},
      };
      for (const tool of tools) await run('atrium-content', content.url, tool, toolArgs[tool], sessions, true);
    }
    return { engine, rows, perRequestMicros, facts };
  } finally {
    await bare?.stop();
    await content.stop();
    if (database.url) await dropSchema(database.url, schema);
    await rm(dataDir, { recursive: true, force: true });
  }
}

function headers(auth: boolean): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL,
    ...(auth ? { authorization: `Bearer ${SECRET}` } : {}),
  };
}

async function openSessions(url: string, count: number, auth: boolean): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const init = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: headers(auth),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: `bench-agent-${i}`, version: '1.0.0' } },
        }),
      });
      const id = init.headers.get('mcp-session-id');
      if (init.status !== 200 || !id) throw new Error(`initialize answered ${init.status}: ${await init.text()}`);
      await init.text();
      const initialized = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { ...headers(auth), 'mcp-session-id': id },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      await initialized.text();
      return id;
    }),
  );
}

/** Each request a fresh JSON-RPC id (one session may carry many calls at once) on the next session in turn. */
function toolCallCase(tool: string, toolArgs: Record<string, unknown>, sessions: string[], auth: boolean): LoadCase {
  let counter = 0;
  const body = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: toolArgs } });
  const headersFor = (n: number) => ({ ...headers(auth), 'mcp-session-id': sessions[n % sessions.length] });
  return {
    method: 'POST',
    path: '/mcp',
    headers: headersFor(0),
    body: body(0),
    vary(request) {
      counter += 1;
      request.headers = headersFor(counter);
      request.body = body(counter);
    },
  };
}

/** One call before measuring, so a case never benchmarks an error by accident. */
async function expectToolResult(url: string, loadCase: LoadCase): Promise<void> {
  const request = { path: loadCase.path, body: loadCase.body, headers: loadCase.headers };
  loadCase.vary?.(request);
  const response = await fetch(url + request.path, { method: 'POST', headers: request.headers, body: request.body });
  const text = await response.text();
  const answer = response.status === 200 ? JSON.parse(text) : undefined;
  if (!answer?.result || answer.result.isError) throw new Error(`tools/call answered ${response.status}: ${text.slice(0, 300)}`);
}

/** Where get_blog_post's time goes; true of every run, so it is part of the report. */
const WHERE_THE_TIME_GOES = [
  'The bare server answers from memory; every content call also authenticates, finds its session, validates its ' +
    'arguments and runs the domain read. Sessions and published reads are kept in each process’s memory and dropped by ' +
    'the change feed (src/platform/changes.ts: a NOTIFY sent in the write’s own transaction, heard by every process when ' +
    'it commits), so a call that finds them there makes no database round trip, and an agent still reads its own writes ' +
    'at once, on any process. What is left is the serving layer: the bearer check (one SHA-256 of the presented secret), ' +
    'the per-request Server and JsonExchange (above; the answer goes out as text, with no web Request, Response or stream ' +
    'around it) and Fastify’s hooks. A first read of a post, or one right after a write of its kind, costs one query ' +
    '(PGlite runs them one at a time in the service process, about 1–2 ms each under load).',
];

function renderReport(runs: EngineRun[], machine: string, loadAtEnd: number): string {
  const quoted = process.argv.slice(2).map((arg) => (/\s/.test(arg) ? JSON.stringify(arg) : arg));
  const command = ['npm run bench:mcp', ...(quoted.length ? ['--', ...quoted] : [])].join(' ');
  const lines = [
    '## Content MCP server',
    '',
    `Command: \`${command}\` (PostgreSQL from \`BENCH_DATABASE_URL\` or \`TEST_DATABASE_URL\`, in a scratch schema dropped afterwards).`,
    '',
    `Machine: ${machine}; load average at end ${loadAtEnd}.`,
    ...(args.note ? ['', `Note: ${args.note}`] : []),
    '',
    `Data: ${seed.posts.toLocaleString('en-US')} published posts and ${seed.items.toLocaleString('en-US')} roadmap items (the bench:content data set).`,
    '',
    `Load: autocannon ${settings.duration} s per case after a ${settings.warmup} s warm-up, ${settings.connections} connections, ` +
      'pipelining 1, loopback; every request is a `tools/call` round trip (POST /mcp, JSON-RPC, answered as one JSON body) on ' +
      `one session, or spread over ${manySessions} sessions in turn. The bare SDK server is the SDK's stateful ` +
      '`WebStandardStreamableHTTPServerTransport` with in-memory sessions behind a bare Fastify route, one tool answering a ' +
      'constant (the same JSON get_blog_post answers); it is measured next to each engine, in the same run. Each server runs ' +
      'in a child process of its own; the content service logs at `info`, as deployed (request lines are at debug).',
    '',
  ];
  for (const run of runs) {
    const bareRate = (sessions: number) => run.rows.find((row) => row.server === 'bare SDK' && row.sessions === sessions)!.result.rps;
    lines.push(
      `### ${run.engine === 'pglite' ? 'Embedded database (PGlite)' : 'PostgreSQL'}`,
      '',
      formatTable(
        ['server', 'tool', 'sessions', 'calls/s', 'p50 ms', 'p99 ms', 'vs bare'],
        run.rows.map((row) => [
          row.server,
          row.tool,
          row.sessions,
          row.result.rps,
          row.result.p50,
          row.result.p99,
          row.server === 'bare SDK' ? '' : `${(row.result.rps / bareRate(row.sessions)).toFixed(2)}×`,
        ]),
      ),
      '',
      'get_asset_upload_url does no database work (the session is kept in memory after its first read, on both engines): ' +
        'it shows what the MCP serving layer costs by itself; get_blog_post adds argument validation and a domain read ' +
        'answered from the read cache.',
      '',
      `Per request the content endpoint builds a low-level Server with its two handlers and a JsonExchange, connects ` +
        `and closes them: ${run.perRequestMicros} µs (measured in the service process, 20,000 rounds after a warm-up).`,
      '',
    );
  }
  lines.push('### Target', '', ...WHERE_THE_TIME_GOES, '');
  for (const run of runs) {
    for (const sessions of [1, manySessions]) {
      const find = (server: Row['server'], tool: string) => run.rows.find((row) => row.server === server && row.tool === tool && row.sessions === sessions);
      const target = find('atrium-content', 'get_blog_post');
      if (!target) continue;
      const ratio = target.result.rps / find('bare SDK', 'constant')!.result.rps;
      lines.push(
        `- ${run.engine}, ${sessions} session${sessions > 1 ? 's' : ''}: get_blog_post at ${ratio.toFixed(2)}× the bare SDK server ` +
          `(target ≥ ${RATIO_TARGET}×: ${ratio >= RATIO_TARGET ? 'met' : '**missed**'}).`,
      );
    }
  }
  return lines.join('\n');
}

// The same file is the parent and its child servers; only the parent (no IPC channel) runs the benchmark.
if (!process.send) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
