/**
 * `npm run bench:console` — the people's console at scale: every page's latency one request at a time (p50/p99),
 * signed in as the owner (who sees everything) and as a member (whose pages are narrowed to their spaces), at
 * 100,000 memory items, 10,000 operations and 50,000 activity entries (target: every page's p99 under 50 ms on
 * PostgreSQL). Each request is a full GET over HTTP with the session cookie, answered by the org service in a
 * child process of its own; each must answer 200 with the page.
 *
 *   npm run bench:console [-- --items 100000 --operations 10000 --activity 50000 --tasks 2000 --calls 200
 *                             --engines postgres --note TEXT --dry-run]
 *
 * PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL, in a scratch schema dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { DatabaseConfig } from '../src/config.js';
import { dropSchema } from '../src/platform/database.js';
import type { ChildServer } from './lib/child.js';
import { describeMachine, machineInfo } from './lib/machine.js';
import { BENCH_OWNER_EMAIL, startOrgServer, type OrgServerInfo } from './lib/org-server.js';
import { formatTable, writeResultsSection } from './lib/report.js';
import { signIn } from './lib/sign-in.js';

type Engine = 'pglite' | 'postgres';

const { values: args } = parseArgs({
  options: {
    items: { type: 'string', default: '100000' },
    operations: { type: 'string', default: '10000' },
    activity: { type: 'string', default: '50000' },
    tasks: { type: 'string', default: '2000' },
    calls: { type: 'string', default: '200' },
    engines: { type: 'string', default: 'postgres' },
    note: { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
  },
});

const calls = Number(args.calls);
const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const TARGET_P99_MS = 50;

interface Row {
  engine: Engine;
  who: 'owner' | 'member';
  page: string;
  p50: number;
  p99: number;
  bytes: number;
  failures: number;
}

/** The pages, with the paths measured; `$op`, `$paused`, `$task`, `$memory` and `$word` are filled from the seed. */
const PAGES: Array<{ page: string; path: string; who: Array<'owner' | 'member'> }> = [
  { page: 'home', path: '/', who: ['owner', 'member'] },
  { page: 'inbox', path: '/inbox', who: ['owner', 'member'] },
  { page: 'activity', path: '/activity', who: ['owner', 'member'] },
  { page: 'activity, one kind', path: '/activity?kind=decision', who: ['owner', 'member'] },
  { page: 'activity, one agent', path: '/activity?agent=$agent', who: ['owner'] },
  { page: 'activity, a day', path: '/activity?from=$yesterday&to=$yesterday', who: ['owner'] },
  { page: 'activity, older page', path: '/activity?before=$older', who: ['owner'] },
  { page: 'operations', path: '/operations', who: ['owner', 'member'] },
  { page: 'operations, failed', path: '/operations?status=failed', who: ['owner', 'member'] },
  { page: 'operation', path: '/operations/$op', who: ['owner'] },
  { page: 'operation, paused', path: '/operations/$paused', who: ['owner'] },
  { page: 'agents', path: '/agents', who: ['owner', 'member'] },
  { page: 'agent', path: '/agents/$agent', who: ['owner'] },
  { page: 'capabilities', path: '/capabilities', who: ['owner', 'member'] },
  { page: 'capability', path: '/capabilities/cap_bench_deploy', who: ['owner', 'member'] },
  { page: 'memory', path: '/memory', who: ['owner', 'member'] },
  { page: 'memory search', path: '/memory?q=$word', who: ['owner', 'member'] },
  { page: 'memory item', path: '/memory/$memory', who: ['owner'] },
  { page: 'tasks', path: '/tasks', who: ['owner', 'member'] },
  { page: 'task', path: '/tasks/$task', who: ['owner'] },
  { page: 'people', path: '/people', who: ['owner', 'member'] },
  { page: 'ask (earlier questions)', path: '/ask', who: ['owner', 'member'] },
];

function percentile(sorted: number[], p: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] * 10) / 10;
}

async function timePage(url: string, cookie: string, pagePath: string): Promise<{ p50: number; p99: number; bytes: number; failures: number }> {
  const times: number[] = [];
  let failures = 0;
  let bytes = 0;
  for (let index = 0; index < calls + Math.ceil(calls / 10); index += 1) {
    const started = performance.now();
    const response = await fetch(url + pagePath, { headers: { cookie }, redirect: 'manual' });
    const text = await response.text();
    const elapsed = performance.now() - started;
    if (response.status !== 200) {
      failures += 1;
      if (failures === 1) console.warn(`  ${pagePath} answered ${response.status}: ${text.slice(0, 200)}`);
    }
    bytes = text.length;
    if (index >= Math.ceil(calls / 10)) times.push(elapsed);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), bytes, failures };
}

function fill(pagePath: string, info: OrgServerInfo, older: string): string {
  const seed = info.console!;
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  return pagePath
    .replace('$op', seed.operationId)
    .replace('$paused', seed.pausedOperationId)
    .replace('$task', seed.taskId)
    .replace('$memory', `${info.memory!.idPrefix}${Math.floor(info.memory!.count / 2)}`)
    .replace('$word', info.memory!.midWords[0])
    .replace('$agent', info.agents.assistant ?? '')
    .replace(/\$yesterday/g, yesterday)
    .replace('$older', older);
}

async function benchEngine(engine: Engine): Promise<{ rows: Row[]; seeds: string }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `atrium-bench-console-${engine}-`));
  const schema = `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const database: DatabaseConfig = engine === 'pglite' ? { dataDir: path.join(dataDir, 'org'), schema: 'org' } : { url: postgresUrl, dataDir: '', schema };
  const logFile = path.join(os.tmpdir(), `atrium-bench-console-${engine}.log`);
  console.log(`\n[${engine}] starting the org service and loading the console's data…`);
  let server: ChildServer<OrgServerInfo> | undefined;
  try {
    server = await startOrgServer(
      {
        database,
        dataDir,
        memoryItems: Number(args.items),
        console: { operations: Number(args.operations), activity: Number(args.activity), tasks: Number(args.tasks) },
      },
      { stdoutFile: logFile },
    );
    const { info, url } = server;
    const seeds = `${engine}: memory ${info.memory?.seconds ?? 0} s, console ${info.console?.seconds ?? 0} s`;
    console.log(`[${engine}] loaded (${seeds}); log ${logFile}`);
    const cookies = {
      owner: await signIn(url, BENCH_OWNER_EMAIL, 'bench-owner-password'),
      member: await signIn(url, info.console!.member.email, info.console!.member.password),
    };
    // An "older entries" page from the middle of the log.
    const older = String(Math.floor(Number(args.activity) / 2));
    const rows: Row[] = [];
    for (const page of PAGES) {
      for (const who of page.who) {
        const measured = await timePage(url, cookies[who], fill(page.path, info, older));
        rows.push({ engine, who, page: page.page, ...measured });
        console.log(`[${engine}] ${page.page} (${who}): p50 ${measured.p50} ms, p99 ${measured.p99} ms${measured.failures ? `, ${measured.failures} FAILED` : ''}`);
      }
    }
    return { rows, seeds };
  } finally {
    await server?.stop();
    if (database.url) await dropSchema(database.url, schema);
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const requested = args.engines.split(',') as Engine[];
  const engines = requested.filter((engine) => engine === 'pglite' || (engine === 'postgres' && postgresUrl));
  if (requested.includes('postgres') && !postgresUrl) console.warn('PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL');
  console.log(`machine: ${describeMachine(machine)}`);
  const rows: Row[] = [];
  const seeds: string[] = [];
  for (const engine of engines) {
    const run = await benchEngine(engine);
    rows.push(...run.rows);
    seeds.push(run.seeds);
  }
  const checked = rows.filter((row) => row.engine === 'postgres');
  const missed = checked.filter((row) => row.p99 >= TARGET_P99_MS || row.failures > 0);
  const quoted = process.argv.slice(2).map((arg) => (/\s/.test(arg) ? JSON.stringify(arg) : arg));
  const command = ['npm run bench:console', ...(quoted.length ? ['--', ...quoted] : [])].join(' ');
  const report = [
    '## console — the people\'s pages at scale',
    '',
    `Command: \`${command}\` (PostgreSQL from \`BENCH_DATABASE_URL\` or \`TEST_DATABASE_URL\`, in a scratch schema dropped afterwards).`,
    '',
    `Machine: ${describeMachine(machine)}; load average at end ${Math.round(os.loadavg()[0] * 100) / 100}.`,
    ...(args.note ? ['', `Note: ${args.note}`] : []),
    '',
    `Data: ${Number(args.items).toLocaleString('en-US')} memory items (bench/lib/org-seed.ts), ${Number(args.operations).toLocaleString('en-US')} operations ` +
      `of every kind and status (capability ones with their verdicts and, when paused, a pending decision, and a third of the succeeded ones approved in the inbox; message ones with a delivery), ` +
      `${Number(args.tasks).toLocaleString('en-US')} tasks and ${Number(args.activity).toLocaleString('en-US')} activity entries, a tenth of it all in a second ` +
      `space whose only member is the "member" (bench/lib/console-seed.ts); loading took ${seeds.join('; ')}.`,
    '',
    `Measure: each page ${calls} times one request at a time after ${Math.ceil(calls / 10)} warm-up requests, each timed from request to the ` +
      'whole page, with the session cookie of the owner (sees everything) or the member (the pages narrowed to their spaces); ' +
      'the org service runs in a child process and logs at `info`, as deployed (a line per request only at debug).',
    '',
    formatTable(
      ['engine', 'page', 'as', 'p50 ms', 'p99 ms', 'page bytes', 'failed'],
      rows.map((row) => [row.engine, row.page, row.who, row.p50, row.p99, row.bytes, row.failures]),
    ),
    '',
    checked.length === 0
      ? 'Target not checked: PostgreSQL was not run.'
      : missed.length === 0
        ? `Target met: every page's p99 under ${TARGET_P99_MS} ms on PostgreSQL, with no failed request.`
        : `Target MISSED on PostgreSQL: ${missed.map((row) => `${row.page} (${row.who}) p99 ${row.p99} ms${row.failures ? `, ${row.failures} failed` : ''}`).join('; ')}.`,
  ].join('\n');
  console.log(`\n${report}`);
  if (!args['dry-run']) {
    await writeResultsSection('console', report);
    console.log('\nwritten to bench/RESULTS.md (section "console")');
  }
  if (missed.length > 0) process.exitCode = 1;
}

await main();
