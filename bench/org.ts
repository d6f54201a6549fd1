/**
 * `npm run bench:org` — the organization's MCP tools at scale, beside `service_context` measured in the same
 * run as the baseline (the cheapest authenticated tool call: token, session, a few reads):
 *
 * - the read calls `service_context`, `search_memory` (one fixed query) and `get_operation` (one succeeded
 *   operation) under load (autocannon) against a bare SDK server (bench/lib/bare-mcp.ts) answering the same bytes
 *   as service_context, measured in the same run (target ≥ 0.5× the bare server's calls per second on PostgreSQL);
 * - `record_memory` calls per second under load (autocannon), each call a new item (target ≥ 0.5× the
 *   baseline's calls per second);
 * - `search_memory` latency one call at a time (p50/p99) at 100,000 memory items, for a typical one-word
 *   query, a two-word query and a partial word that only the trigram fallback finds (target p99 < 20 ms on
 *   PostgreSQL);
 * - `ask` latency one question at a time (p50/p99) at the same size, without a model: the whole operation
 *   round trip — the operation is written, the calling process runs retrieval and the extractive answer, the
 *   call returns the succeeded operation (target p99 < 50 ms);
 * - `message_agent` round trips per second under load, with the example agent (examples/agent/index.js, in a
 *   process of its own) verifying each signed delivery and answering at once (target ≥ 0.5× the baseline on
 *   PostgreSQL);
 * - `execute_capability` of a low-risk webhook capability (allowed by a standing rule) round trips per second
 *   under load: the gate's inputs loaded and its verdict stored, the agent charged, a signed POST to a local
 *   receiver answering 200 (target ≥ 0.5× the baseline on PostgreSQL);
 * - on PostgreSQL, the floor of a work round trip (`bare_work`): the bare SDK server's `work` tool writes a row,
 *   makes the same signed POST to the same receiver and records the outcome — two statements and nothing else —
 *   so the work rows can be read against what any durable implementation costs on this machine; and
 *   (`bare_post`) the same server making only the signed POST, no statement: the ceiling of any work call that
 *   reaches another process over HTTP.
 *
 * Cases are a table (`CASES`): each measures against one seeded org service and returns rows and target
 * checks. Every call is a full MCP `tools/call` round trip over HTTP on an initialized session with an OAuth
 * access token.
 *
 *   npm run bench:org [-- --items 100000 --duration 10 --warmup 2 --connections 20 --calls 500
 *                         --engines pglite,postgres
 *                         --cases bare,service_context,search_memory,get_operation,ask,record_memory,message_agent,execute_capability,bare_work,
 *                                 bare_post
 *                         --cpu-prof DIR --note TEXT --dry-run]
 *
 * PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL, in a scratch schema dropped afterwards.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import type { DatabaseConfig } from '../src/config.js';
import { dropSchema } from '../src/platform/database.js';
import type { ChildServer } from './lib/child.js';
import { measure, type LoadCase, type LoadResult, type LoadSettings } from './lib/load.js';
import { describeMachine, machineInfo } from './lib/machine.js';
import { startWebhookReceiver } from '../test/helpers/webhook-receiver.js';
import { BENCH_OWNER_EMAIL, startOrgServer, type OrgServerInfo } from './lib/org-server.js';
import { openOrgSession } from './lib/org.js';
import { searchQueries } from './lib/org-seed.js';
import { startBareMcpServer } from './lib/bare-mcp.js';
import { formatTable, writeResultsSection } from './lib/report.js';

type Engine = 'pglite' | 'postgres';

const { values: args } = parseArgs({
  options: {
    items: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '20' },
    calls: { type: 'string', default: '500' },
    engines: { type: 'string', default: 'pglite,postgres' },
    cases: {
      type: 'string',
      default: 'bare,service_context,search_memory,get_operation,ask,record_memory,message_agent,execute_capability,bare_work,bare_post',
    },
    note: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
  },
});

const settings: LoadSettings = { duration: Number(args.duration), warmup: Number(args.warmup), connections: Number(args.connections), pipelining: 1 };
/** Calls per one-at-a-time case (after 10 % as many warm-up calls). */
const sequentialCalls = Number(args.calls);
const memoryItems = Number(args.items);
const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;

// ---------------------------------------------------------------------------------------------------------
// What a case works with, and what it reports

/** The seeded org service and an MCP session on it. */
interface OrgBench {
  engine: Engine;
  url: string;
  info: OrgServerInfo;
  /** Headers of every `tools/call` on the session (bearer token, session id, protocol version). */
  headers: Record<string, string>;
  /** Rows measured earlier in this engine's run (the baseline, for ratios). */
  rows: Row[];
  /** The service's PostgreSQL database (URL and scratch schema), where bare_work writes too. */
  postgres?: { url: string; schema: string };
  counterparts: Counterparts;
}

interface Row {
  engine: Engine;
  case: string;
  /** `load`: autocannon with `settings.connections`; `one at a time`: a loop of sequential calls. */
  mode: 'load' | 'one at a time';
  callsPerSecond: number;
  p50: number;
  p99: number;
  calls: number;
  /** Answers that were not a successful tool result (must be 0 for the row to mean anything). */
  failures: number;
}

interface TargetCheck {
  engine: Engine;
  text: string;
  met: boolean;
}

interface BenchCase {
  run(bench: OrgBench): Promise<{ rows: Row[]; targets?: TargetCheck[] }>;
}

/** The bare SDK server's row: the baseline of the read calls under load. */
const BARE_CASE = 'bare SDK server (one tool answering service_context\'s bytes)';

const CASES: Record<string, BenchCase> = {
  bare: {
    async run(bench) {
      // The bare tool answers the text service_context answers, so the two differ only in the work behind them.
      const answer = await callTool(bench, 'service_context', {});
      const bare = await startBareMcpServer(JSON.parse(answer.text).result.content[0].text);
      try {
        const onBare = { ...bench, url: bare.url, headers: await openOrgSession(bare.url, 'none', 'bench-bare') };
        return { rows: [await loadRow(onBare, BARE_CASE, toolCallCase(onBare, 'constant', () => ({})))] };
      } finally {
        await bare.stop();
      }
    },
  },

  service_context: {
    async run(bench) {
      const load = await loadRow(bench, 'service_context', toolCallCase(bench, 'service_context', () => ({})));
      return {
        rows: [
          load,
          // The baseline of the one-at-a-time rows: what any tool call costs on this machine in this run.
          await sequentialRow(bench, 'service_context', () => ['service_context', {}]),
        ],
        targets: bareTarget(bench, load),
      };
    },
  },

  get_operation: {
    async run(bench) {
      const answer = await callTool(bench, 'ask', { question: 'What do we know about the benchmark?' });
      if (!answer.ok) throw new Error(`ask failed: ${answer.text.slice(0, 300)}`);
      const operationId = JSON.parse(answer.text).result.structuredContent.operation_id as string;
      const row = await loadRow(bench, 'get_operation, one succeeded operation', toolCallCase(bench, 'get_operation', () => ({ operation_id: operationId })));
      return { rows: [row], targets: bareTarget(bench, row) };
    },
  },

  search_memory: {
    async run(bench) {
      const words = bench.info.memory!.midWords;
      // Under load, one fixed query (as content's search_content row): what a client repeating a search costs.
      const fixed = await loadRow(bench, `search_memory, one fixed query ("${words[0]}")`, toolCallCase(bench, 'search_memory', () => ({ query: words[0] })));
      const rows: Row[] = [fixed];
      const targets: TargetCheck[] = bareTarget(bench, fixed);
      for (const { label, queries } of searchQueries(sequentialCalls + Math.ceil(sequentialCalls / 10))) {
        const row = await sequentialRow(bench, `search_memory, ${label}`, (i) => ['search_memory', { query: queries[i] }]);
        rows.push(row);
        if (bench.engine === 'postgres') targets.push({ engine: bench.engine, text: `search_memory ${label}: p99 ${row.p99} ms one at a time (target < 20 ms)`, met: row.p99 < 20 });
      }
      return { rows, targets };
    },
  },

  ask: {
    async run(bench) {
      const words = bench.info.memory!.midWords;
      const row = await sequentialRow(bench, 'ask (no model), operation round trip', (i) => [
        'ask',
        { question: `What do we know about ${words[i % words.length]} and ${words[(i + 3) % words.length]}?` },
      ]);
      return { rows: [row], targets: [{ engine: bench.engine, text: `ask p99 ${row.p99} ms one at a time (target < 50 ms)`, met: row.p99 < 50 }] };
    },
  },

  record_memory: {
    async run(bench) {
      let n = 0;
      const row = await loadRow(
        bench,
        'record_memory',
        toolCallCase(bench, 'record_memory', () => {
          n += 1;
          return { kind: 'fact', space_id: bench.info.spaceId, title: `Bench fact ${n}`, body: `Recorded under load, number ${n} of the run.`, tags: ['bench'] };
        }),
      );
      return { rows: [row], targets: ratioTarget(bench, row, 0.5) };
    },
  },

  message_agent: {
    async run(bench) {
      const args = { agent_id: bench.info.agents.bench, text: 'ping', space_id: bench.info.spaceId, wait_seconds: 20 };
      const row = await loadRow(bench, 'message_agent → succeeded (example agent answers at once)', toolCallCase(bench, 'message_agent', () => args));
      return { rows: [row], targets: bench.engine === 'postgres' ? ratioTarget(bench, row, 0.5) : [] };
    },
  },

  execute_capability: {
    async run(bench) {
      const args = { capability_id: bench.info.capabilities.bench_notify, input: { text: 'bench' }, space_id: bench.info.spaceId, wait_seconds: 20 };
      const row = await loadRow(bench, 'execute_capability → succeeded (low-risk webhook)', toolCallCase(bench, 'execute_capability', () => args));
      return { rows: [row], targets: bench.engine === 'postgres' ? ratioTarget(bench, row, 0.5) : [] };
    },
  },

  bare_work: { run: (bench) => bareWorkRow(bench, 'work', BARE_WORK_CASE) },
  bare_post: { run: (bench) => bareWorkRow(bench, 'post', BARE_POST_CASE) },
};

/** The bare SDK server's `work` or `post` tool under load (bench/lib/bare-mcp.ts), on PostgreSQL. */
async function bareWorkRow(bench: OrgBench, tool: 'work' | 'post', name: string): Promise<{ rows: Row[]; targets: TargetCheck[] }> {
  if (!bench.postgres) return { rows: [], targets: [] };
  const bare = await startBareMcpServer('', { ...bench.postgres, receiverUrl: bench.counterparts.receiverUrl });
  try {
    const onBare = { ...bench, url: bare.url, headers: await openOrgSession(bare.url, 'none', `bench-bare-${tool}`) };
    const row = await loadRow(onBare, name, toolCallCase(onBare, tool, () => ({ text: 'bench' })));
    return { rows: [row], targets: [] };
  } finally {
    await bare.stop();
  }
}

/** The floor of a work round trip: the bare server's durable action (bench/lib/bare-mcp.ts). */
const BARE_WORK_CASE = 'bare work floor: a row, the signed POST, the outcome (bare SDK server)';
/** The ceiling of any work call over HTTP: the bare server's signed POST and nothing else. */
const BARE_POST_CASE = 'bare POST alone: the signed POST, no statement (bare SDK server)';

/** The bare SDK server's calls per second under load in the same run, when measured. */
function bareCallsPerSecond(rows: readonly Row[], engine: Engine): number | undefined {
  return rows.find((other) => other.engine === engine && other.case === BARE_CASE)?.callsPerSecond;
}

/** A read call's calls per second against the bare SDK server's under load in the same run (target on PostgreSQL). */
function bareTarget(bench: OrgBench, row: Row): TargetCheck[] {
  const bare = bareCallsPerSecond(bench.rows, bench.engine);
  if (bench.engine !== 'postgres' || !bare) return [];
  const ratio = row.callsPerSecond / bare;
  return [{ engine: bench.engine, text: `${row.case} at ${ratio.toFixed(2)}× the bare SDK server's calls/s under load (target ≥ 0.5×)`, met: ratio >= 0.5 }];
}

/** `row`'s calls per second against service_context's under load in the same run. */
function ratioTarget(bench: OrgBench, row: Row, target: number): TargetCheck[] {
  const baseline = bench.rows.find((other) => other.case === 'service_context' && other.mode === 'load');
  if (!baseline) return [];
  const ratio = row.callsPerSecond / baseline.callsPerSecond;
  const tool = row.case.split(' ')[0];
  return [{ engine: bench.engine, text: `${tool} at ${ratio.toFixed(2)}× service_context calls/s under load (target ≥ ${target}×)`, met: ratio >= target }];
}

// ---------------------------------------------------------------------------------------------------------
// What the work cases talk to: the example agent and a webhook receiver, declared in an organization file

interface Counterparts {
  agentUrl: string;
  receiverUrl: string;
  stop(): Promise<void>;
}

const AGENT_SECRET_ENV = 'BENCH_AGENT_SECRET';
const HOOK_SECRET_ENV = 'BENCH_HOOK_SECRET';

/** The example agent as a user runs it, and a receiver standing in for the world; their secrets reach the child through the environment. */
async function startCounterparts(): Promise<Counterparts> {
  process.env[AGENT_SECRET_ENV] = `whsec_${randomBytes(32).toString('base64')}`;
  process.env[HOOK_SECRET_ENV] = `whsec_${randomBytes(32).toString('base64')}`;
  const agent = spawn(process.execPath, [path.resolve('examples/agent/index.js')], {
    env: { ...process.env, PORT: '0', AGENT_SECRET: process.env[AGENT_SECRET_ENV] },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: agent.stdout! });
  const port = await new Promise<number>((resolve) =>
    lines.on('line', (line) => {
      const entry = JSON.parse(line);
      if (entry.event === 'listening') resolve(entry.port);
    }),
  );
  const receiver = await startWebhookReceiver({ keepAliveMs: 5_000 });
  return {
    agentUrl: `http://127.0.0.1:${port}/`,
    receiverUrl: `${receiver.url}/hook`,
    async stop() {
      agent.kill('SIGTERM');
      await receiver.close();
    },
  };
}

function benchOrgFile(counterparts: Counterparts): string {
  return `spaces: [{ key: general, name: General, members: [${BENCH_OWNER_EMAIL}] }]
agents:
  - { key: bench, name: Bench agent, autonomy: 2, responsible: ${BENCH_OWNER_EMAIL}, delivery: { kind: webhook, url: "${counterparts.agentUrl}", secret_env: ${AGENT_SECRET_ENV} } }
capabilities:
  - { key: bench_notify, name: Bench notify, risk: low, connector: { kind: webhook, url: "${counterparts.receiverUrl}", secret_env: ${HOOK_SECRET_ENV} },
      input_schema: { type: object, required: [text], properties: { text: { type: string } } } }
rules: [{ name: Bench may notify, when: { capability: bench_notify }, then: allow }]
`;
}

// ---------------------------------------------------------------------------------------------------------
// Measuring

async function loadRow(bench: OrgBench, name: string, loadCase: LoadCase): Promise<Row> {
  const result: LoadResult = await measure(bench.url, loadCase, settings);
  const ok = result.statuses['200'] ?? 0;
  return {
    engine: bench.engine,
    case: name,
    mode: 'load',
    callsPerSecond: result.rps,
    p50: result.p50,
    p99: result.p99,
    calls: result.requests,
    failures: result.requests - ok + result.errors + result.timeouts + (loadCase as CountedCase).toolErrors(),
  };
}

type CountedCase = LoadCase & { toolErrors(): number };

/**
 * Each request a fresh JSON-RPC id and fresh arguments. autocannon does not read bodies, so a sample of
 * answers is checked separately: a tool error would otherwise count as a fast success.
 */
function toolCallCase(bench: OrgBench, tool: string, argumentsOf: () => Record<string, unknown>): CountedCase {
  let id = 0;
  const body = () => JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: tool, arguments: argumentsOf() } });
  let errors = 0;
  const probe = async () => {
    const answer = await callTool(bench, tool, argumentsOf());
    if (answer.ok) return;
    errors += 1;
    if (errors === 1) console.warn(`[${bench.engine}] ${tool}: ${answer.text.slice(0, 300)}`);
  };
  return {
    method: 'POST',
    path: '/mcp',
    headers: bench.headers,
    body: body(),
    vary(request) {
      request.body = body();
      if (id % 500 === 0) void probe();
    },
    toolErrors: () => errors,
  };
}

async function sequentialRow(bench: OrgBench, name: string, next: (i: number) => [string, Record<string, unknown>]): Promise<Row> {
  const warmup = Math.ceil(sequentialCalls / 10);
  // The warm-up calls get the numbers after the timed ones, so a case that varies its call by number never repeats one.
  for (let i = 0; i < warmup; i++) await callTool(bench, ...next(sequentialCalls + i));
  const times: number[] = [];
  let failures = 0;
  const started = performance.now();
  for (let i = 0; i < sequentialCalls; i++) {
    const before = performance.now();
    const answer = await callTool(bench, ...next(i));
    times.push(performance.now() - before);
    if (!answer.ok) {
      failures += 1;
      if (failures === 1) console.warn(`[${bench.engine}] ${name}: ${answer.text.slice(0, 300)}`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))] * 10) / 10;
  return { engine: bench.engine, case: name, mode: 'one at a time', callsPerSecond: Math.round(sequentialCalls / seconds), p50: at(0.5), p99: at(0.99), calls: sequentialCalls, failures };
}

/** One `tools/call`; ok when HTTP 200 and a tool result that is not an error (and, for work tools, succeeded). */
async function callTool(bench: OrgBench, name: string, toolArgs: Record<string, unknown>): Promise<{ ok: boolean; text: string }> {
  const response = await fetch(`${bench.url}/mcp`, {
    method: 'POST',
    headers: bench.headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: toolArgs } }),
  });
  const text = await response.text();
  if (response.status !== 200) return { ok: false, text };
  const result = JSON.parse(text).result;
  const structured = result?.structuredContent;
  const ok = result && !result.isError && (structured?.operation_id === undefined || structured.status === 'succeeded');
  return { ok: Boolean(ok), text };
}

// ---------------------------------------------------------------------------------------------------------
// Running and reporting

async function benchEngine(engine: Engine, caseNames: string[], counterparts: Counterparts): Promise<{ rows: Row[]; targets: TargetCheck[]; seedSeconds: number }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `atrium-bench-org-${engine}-`));
  const schema = `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const database: DatabaseConfig = engine === 'pglite' ? { dataDir: path.join(dataDir, 'org'), schema: 'org' } : { url: postgresUrl, dataDir: '', schema };
  const logFile = path.join(os.tmpdir(), `atrium-bench-org-${engine}.log`);
  console.log(`\n[${engine}] starting the org service and loading ${memoryItems.toLocaleString('en-US')} memory items…`);
  let server: ChildServer<OrgServerInfo> | undefined;
  try {
    const orgFile = path.join(dataDir, 'org.yaml');
    await writeFile(orgFile, benchOrgFile(counterparts));
    server = await startOrgServer({ database, dataDir, memoryItems, orgFile }, { stdoutFile: logFile, cpuProfDir: args['cpu-prof'] ? path.resolve(args['cpu-prof'], engine) : undefined });
    console.log(`[${engine}] loaded in ${server.info.memory?.seconds ?? 0} s; log ${logFile}`);
    const bench: OrgBench = {
      engine,
      url: server.url,
      info: server.info,
      headers: await openOrgSession(server.url, server.info.accessToken, 'bench-org'),
      rows: [],
      postgres: database.url ? { url: database.url, schema } : undefined,
      counterparts,
    };
    const targets: TargetCheck[] = [];
    for (const name of caseNames) {
      const measured = await CASES[name].run(bench);
      bench.rows.push(...measured.rows);
      targets.push(...(measured.targets ?? []));
      for (const row of measured.rows) {
        console.log(`[${engine}] ${row.case} (${row.mode}): ${row.callsPerSecond} calls/s, p50 ${row.p50} ms, p99 ${row.p99} ms${row.failures ? `, ${row.failures} FAILED` : ''}`);
      }
    }
    return { rows: bench.rows, targets, seedSeconds: server.info.memory?.seconds ?? 0 };
  } finally {
    await server?.stop();
    if (database.url) await dropSchema(database.url, schema);
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const caseNames = args.cases.split(',');
  for (const name of caseNames) if (!CASES[name]) throw new Error(`unknown case ${name}; known: ${Object.keys(CASES).join(', ')}`);
  const requested = args.engines.split(',') as Engine[];
  const engines = requested.filter((engine) => engine === 'pglite' || (engine === 'postgres' && postgresUrl));
  if (requested.includes('postgres') && !postgresUrl) console.warn('PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL');
  console.log(`machine: ${describeMachine(machine)}`);

  const rows: Row[] = [];
  const targets: TargetCheck[] = [];
  const seeds: string[] = [];
  const counterparts = await startCounterparts();
  try {
    for (const engine of engines) {
      const run = await benchEngine(engine, caseNames, counterparts);
      rows.push(...run.rows);
      targets.push(...run.targets);
      seeds.push(`${engine} ${run.seedSeconds} s`);
    }
  } finally {
    await counterparts.stop();
  }
  const report = renderReport(rows, targets, describeMachine(machine), seeds);
  console.log(`\n${report}`);
  if (!args['dry-run']) {
    await writeResultsSection('org', report);
    console.log('\nwritten to bench/RESULTS.md (section "org")');
  }
}

/** What each row pays for, and what would make it faster; true of every run, so it is part of the report. */
const WHERE_THE_TIME_GOES = [
  'Where the time goes. search_memory with full-text search ranks, in its first tier, only the matches among the ' +
    'newest 10,000 visible items (found in memory_recent, the newest items of each space with a GIN index of their ' +
    'own, since session 36), so a page costs about a hundred ranked rows for a common word rather than every match; ' +
    'two words match fewer items. The trigram fallback answers ' +
    'newest first from the recorded_at index and stops after one page when a fragment is common. ask adds to its two ' +
    'searches (memory, then tasks) the operation round trip: the operation and its job are written, the call runs it in ' +
    'its own process after the commit and returns the operation its run answered. message_agent and execute_capability ' +
    'are bound by CPU: the org process and PostgreSQL share the two cores with the example agent or the receiver. Their ' +
    'statements, counted on PostgreSQL with log_statement = all, besides the one SELECT 1 on the change feed\'s ' +
    'connection that every MCP request shares with the requests waiting beside it: message_agent 2 (the start, written ' +
    'running with its tool.called and operation.running entries and the delivery with its first attempt counted, its ' +
    'next attempt queued and its callback token, since session 38; the settlement with the end), the agent read from memory; execute_capability 4 (the start; the gate\'s inputs; the charge, the ' +
    'mark and the verdict with its entry in one statement; the end), the client\'s agent and the capability read from ' +
    'memory. Under load an execute_capability costs the org process about 5.5 ms of CPU and PostgreSQL about 4 ms ' +
    '(the floor\'s server 1.3 ms and 0.4 ms; sampled from /proc during a run, session 33); the org process\'s profile ' +
    'puts a fifth in socket writes (each statement, the answer, the delivery), a sixth in garbage collection (the young ' +
    'generation was held to 2 MB for idle memory then; 4 MB since session 34, SERVING_NODE_FLAGS) and most of the rest in building statements; ' +
    'PostgreSQL\'s log put half of each write statement\'s time in parse and plan, so a write seen twice is prepared on ' +
    'each connection since session 50 (src/platform/prepared-writes.ts). ' +
    'The bare work row is the floor of any durable round trip on the same machine (a row written before the action, ' +
    'the signed POST, the outcome written after: two statements and nothing else); where it is itself under half of ' +
    'service_context, no implementation that records work before doing it reaches the 0.5× target on that machine. ' +
    'The bare POST row is the ceiling of any work call at all: the same server making the signed POST and nothing else. ' +
    'The read calls make no statement at all once their token, session, the person\'s spaces and directory ' +
    '(service_context), the page (search_memory, kept one second) or the settled operation (get_operation) are in the ' +
    'process\'s memory: each is dropped on every process by the change feed when a write of its kind commits ' +
    '(src/org/read-cache.ts), so what is left is the serving layer — the bearer check, the per-request Server and ' +
    'transport. ' +
    'Compare the one-at-a-time rows with service_context one at a time in the same run: on a busy machine every row ' +
    'is slower, and the ratio to that baseline is the steadier figure.',
  '',
  'If a target is missed on a quiet machine: for search, order by rank inside the index (the rum extension, on ' +
    'PostgreSQL only); for the work round trips, the gate\'s inputs as a ' +
    'prepared statement; past that, a work call is two processes woken per statement on a ' +
    'shared machine, and the floor and ceiling rows bound what is left.',
];

/** A load row's calls per second as a multiple of the bare SDK server's in the same run ("" for other rows). */
function timesBare(rows: readonly Row[], row: Row): string {
  const bare = bareCallsPerSecond(rows, row.engine);
  return row.mode === 'load' && bare && row.case !== BARE_CASE ? (row.callsPerSecond / bare).toFixed(2) : '';
}

/** The work rows against the floor of a durable round trip measured in the same run (bare_work), where it was. */
function floorLines(rows: readonly Row[]): string[] {
  const lines: string[] = [];
  const load = (engine: Engine, tool: string) => rows.find((row) => row.engine === engine && row.mode === 'load' && row.case.split(' ')[0] === tool);
  const ofServiceContext = (row: Row) => {
    const baseline = load(row.engine, 'service_context');
    return baseline ? `, ${(row.callsPerSecond / baseline.callsPerSecond).toFixed(2)}× service_context` : '';
  };
  for (const floor of rows.filter((row) => row.case === BARE_WORK_CASE)) {
    const against = ['message_agent', 'execute_capability'].flatMap((tool) => {
      const row = load(floor.engine, tool);
      return row ? [`${tool} ${(row.callsPerSecond / floor.callsPerSecond).toFixed(2)}×`] : [];
    });
    lines.push(
      `The floor (${floor.engine}): a bare work round trip (two statements and the signed POST, nothing else) reached ` +
        `${floor.callsPerSecond} calls/s${ofServiceContext(floor)}` +
        (against.length ? `; against it, ${against.join(', ')}.` : '.'),
      '',
    );
  }
  for (const ceiling of rows.filter((row) => row.case === BARE_POST_CASE)) {
    lines.push(
      `The ceiling (${ceiling.engine}): the bare SDK server making the signed POST alone, with no statement, reached ` +
        `${ceiling.callsPerSecond} calls/s${ofServiceContext(ceiling)}: no work call that reaches another process over HTTP ` +
        'answers faster than that on this machine, durable or not.',
      '',
    );
  }
  return lines;
}

function renderReport(rows: Row[], targets: TargetCheck[], machine: string, seeds: string[]): string {
  const quoted = process.argv.slice(2).map((arg) => (/\s/.test(arg) ? JSON.stringify(arg) : arg));
  const command = ['npm run bench:org', ...(quoted.length ? ['--', ...quoted] : [])].join(' ');
  return [
    '## org — organization MCP tools',
    '',
    `Command: \`${command}\` (PostgreSQL from \`BENCH_DATABASE_URL\` or \`TEST_DATABASE_URL\`, in a scratch schema dropped afterwards).`,
    '',
    `Machine: ${machine}; load average at end ${Math.round(os.loadavg()[0] * 100) / 100}.`,
    ...(args.note ? ['', `Note: ${args.note}`] : []),
    '',
    `Data: ${memoryItems.toLocaleString('en-US')} memory items in the owner's space, loaded by one INSERT … SELECT over generate_series ` +
      `(bench/lib/org-seed.ts: made-up words from a 5,000-word vocabulary, skewed so a few words are everywhere and most are rare; ` +
      `five-word titles, 45-word bodies, two tags), then ANALYZE; loading took ${seeds.join(', ')}.`,
    '',
    `Load: every call is a \`tools/call\` round trip over HTTP on one initialized MCP session with the owner's OAuth access token; ` +
      `the org service runs in a child process of its own and logs at \`info\`, as deployed (a line per request only at debug). "load" rows: autocannon ` +
      `${settings.duration} s after a ${settings.warmup} s warm-up, ${settings.connections} connections, loopback; every record_memory ` +
      `call records a new item (no idempotency_key); search_memory under load repeats one fixed query, as content's ` +
      `search_content row does, and get_operation reads one succeeded operation (an ask answered before the row); the bare SDK ` +
      `server (bench/lib/bare-mcp.ts: the SDK's stateful transport with sessions in memory, one tool answering the text ` +
      `service_context answers) runs in a child process of its own, and "× bare" is a row's calls/s over its calls/s in ` +
      `the same run. "one at a time" rows: ${sequentialCalls} calls in a loop after ` +
      `${Math.ceil(sequentialCalls / 10)} warm-up calls, each timed from request to full answer; the queries vary per call. ` +
      'ask is measured without a model. The work tools (ask, message_agent, execute_capability) are operation round trips: the ' +
      'call writes the operation and its job (claimed by the calling process), runs it in that process right after the commit ' +
      '(retrieval and the extractive answer; a signed delivery the example agent verifies and answers at once; the gate, ' +
      'the charge and a signed POST to a receiver answering 200), and returns the succeeded operation. The example agent ' +
      'and the receiver run in processes of their own.',
    '',
    formatTable(
      ['engine', 'case', 'mode', 'calls/s', '× bare', 'p50 ms', 'p99 ms', 'calls', 'failed'],
      rows.map((row) => [row.engine, row.case, row.mode, row.callsPerSecond, timesBare(rows, row), row.p50, row.p99, row.calls, row.failures]),
    ),
    '',
    '### Targets',
    '',
    ...targets.map((target) => `- ${target.engine}: ${target.text}: ${target.met ? 'met' : '**missed**'}.`),
    '',
    ...floorLines(rows),
    ...WHERE_THE_TIME_GOES,
  ].join('\n');
}

if (!process.send) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
