/**
 * `npm run bench:content` — throughput and latency of the content REST API's hot routes (issue 2, item 8)
 * with 10,000 published posts and 1,000 roadmap items loaded, on the embedded database and on PostgreSQL,
 * next to a bare Fastify route answering the same JSON as `GET /blog?limit=20` from memory, in one run with
 * the same autocannon settings.
 *
 * Each server runs in a child process of its own; autocannon runs in this process. Targets: public list
 * reads at ≥ 0.5× the bare route's requests/s; search p99 < 20 ms at 10,000 posts.
 *
 *   npm run bench:content [-- --duration 10 --warmup 2 --connections 50 --engines pglite,postgres
 *                             --posts 10000 --items 1000 --cpu-prof DIR --note TEXT --dry-run]
 *
 * PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL, in a scratch schema dropped afterwards.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import type { DatabaseConfig } from '../src/config.js';
import { dropSchema } from '../src/platform/database.js';
import { startBareServer } from './lib/bare-server.js';
import { startContentServer } from './lib/content-server.js';
import type { SeedFacts } from './lib/content-seed.js';
import { measure, type LoadCase, type LoadResult, type LoadSettings } from './lib/load.js';
import { describeMachine, machineInfo } from './lib/machine.js';
import { formatTable, writeResultsSection } from './lib/report.js';

type Engine = 'pglite' | 'postgres';

const LIST_RATIO_TARGET = 0.5;
const SEARCH_P99_TARGET_MS = 20;

interface Row {
  name: string;
  result: LoadResult;
  expected: number;
  connections: number;
}

interface EngineRun {
  engine: Engine;
  facts: SeedFacts;
  rows: Row[];
  bare: LoadResult;
  /** Bytes of the `GET /blog?limit=20` body both servers answer. */
  listBytes: number;
}

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    engines: { type: 'string', default: 'pglite,postgres' },
    posts: { type: 'string', default: '10000' },
    items: { type: 'string', default: '1000' },
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
const seed = { posts: Number(args.posts), items: Number(args.items) };
const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;

async function main(): Promise<void> {
  const machine = machineInfo();
  const requested = args.engines.split(',') as Engine[];
  const engines = requested.filter((engine) => engine === 'pglite' || (engine === 'postgres' && postgresUrl));
  const skipped = requested.filter((engine) => !engines.includes(engine));
  if (skipped.includes('postgres')) console.warn('PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL');
  console.log(`machine: ${describeMachine(machine)}`);
  console.log(`settings: ${JSON.stringify(settings)}, data: ${seed.posts} posts, ${seed.items} roadmap items\n`);

  const runs: EngineRun[] = [];
  for (const engine of engines) runs.push(await benchEngine(engine));

  const loadAtEnd = Math.round(os.loadavg()[0] * 100) / 100;
  const report = renderReport(runs, describeMachine(machine), loadAtEnd);
  console.log(`\n${report}`);
  if (!args['dry-run']) {
    await writeResultsSection('content', report);
    console.log('\nwritten to bench/RESULTS.md (section "content")');
  }
}

async function benchEngine(engine: Engine): Promise<EngineRun> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `atrium-bench-${engine}-`));
  const schema = `bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const database: DatabaseConfig =
    engine === 'pglite' ? { dataDir: path.join(dataDir, 'content'), schema: 'content' } : { url: postgresUrl, dataDir: '', schema };
  const logFile = path.join(os.tmpdir(), `atrium-bench-content-${engine}.log`);

  console.log(`[${engine}] starting the content service and loading ${seed.posts} posts, ${seed.items} items…`);
  const cpuProfDir = args['cpu-prof'] ? path.resolve(args['cpu-prof'], engine) : undefined;
  const content = await startContentServer({ database, dataDir, seed }, { cpuProfDir, stdoutFile: logFile });
  const facts = content.info;
  console.log(
    `[${engine}] loaded in ${facts.seconds} s: ${facts.votes} votes; "${facts.search.common.word}" in ${facts.search.common.posts} posts, ` +
      `"${facts.search.rare.word}" in ${facts.search.rare.posts}; service pid ${content.pid}, log ${logFile}`,
  );
  try {
    const list = await fetch(`${content.url}/blog?limit=20`);
    const listText = await list.text();
    if (list.status !== 200) throw new Error(`GET /blog?limit=20 answered ${list.status}: ${listText.slice(0, 300)}`);
    const etag = list.headers.get('etag');
    const bareServer = await startBareServer('/blog', JSON.parse(listText));
    try {
      const rows: Row[] = [];
      const run = async (name: string, url: string, loadCase: LoadCase, expected = 200, connections = settings.connections) => {
        await expectStatus(url, loadCase, expected);
        const result = await measure(url, loadCase, { ...settings, connections });
        rows.push({ name, result, expected, connections });
        console.log(`[${engine}] ${name}: ${result.rps} req/s, p99 ${result.p99} ms ${statusSummary(result, expected)}`);
        return result;
      };

      const bare = await run('bare Fastify route, same JSON from memory', bareServer.url, { path: '/blog?limit=20' });
      await run('GET /blog?limit=20', content.url, { path: '/blog?limit=20' });
      if (etag) await run('GET /blog?limit=20 with If-None-Match', content.url, { path: '/blog?limit=20', headers: { 'if-none-match': etag } }, 304);
      await run('GET /roadmap', content.url, { path: '/roadmap' });
      const { common, rare } = facts.search;
      await run(`GET /search?query=${common.word}`, content.url, { path: `/search?query=${common.word}` });
      await run(`GET /search?query=${rare.word}`, content.url, { path: `/search?query=${rare.word}` });
      // Unloaded latency: one request at a time, so p99 is the time a search takes, not time spent queueing.
      await run(`GET /search?query=${common.word}`, content.url, { path: `/search?query=${common.word}` }, 200, 1);
      await run('POST /roadmap/:slug/vote (distinct voters)', content.url, voteCase(facts.votableSlugs));
      return { engine, facts, rows, bare, listBytes: Buffer.byteLength(listText) };
    } finally {
      await bareServer.stop();
    }
  } finally {
    await content.stop();
    if (database.url) await dropSchema(database.url, schema);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Every request a new voter on the next open item, so each one is a real write (no duplicate short-cut). */
function voteCase(slugs: string[]): LoadCase {
  if (slugs.length === 0) throw new Error('no public open roadmap items to vote on');
  const run = randomBytes(4).toString('hex');
  let counter = 0;
  const pathFor = (n: number) => `/roadmap/${slugs[n % slugs.length]}/vote`;
  return {
    method: 'POST',
    path: pathFor(0),
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ voter_id: `bench-${run}-0` }),
    vary(request) {
      counter += 1;
      request.path = pathFor(counter);
      request.body = JSON.stringify({ voter_id: `bench-${run}-${counter}` });
    },
  };
}

/** One request before measuring, so a case never benchmarks an error page by accident. */
async function expectStatus(url: string, loadCase: LoadCase, expected: number): Promise<void> {
  const request = { path: loadCase.path, body: loadCase.body, headers: loadCase.headers };
  loadCase.vary?.(request);
  const response = await fetch(url + request.path, { method: loadCase.method ?? 'GET', headers: request.headers, body: request.body });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${loadCase.method ?? 'GET'} ${request.path} answered ${response.status}, expected ${expected}: ${text.slice(0, 300)}`);
}

function statusSummary(result: LoadResult, expected: number): string {
  const other = Object.entries(result.statuses).filter(([code]) => Number(code) !== expected);
  const problems = [...other.map(([code, count]) => `${count}×${code}`), ...(result.errors ? [`${result.errors} errors`] : [])];
  return problems.length ? `(UNEXPECTED: ${problems.join(', ')})` : '';
}

function renderReport(runs: EngineRun[], machine: string, loadAtEnd: number): string {
  const command = ['npm run bench:content', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');
  const lines: string[] = [
    '## Content service REST API',
    '',
    `Command: \`${command}\` (PostgreSQL from \`BENCH_DATABASE_URL\` or \`TEST_DATABASE_URL\`, in a scratch schema dropped afterwards).`,
    '',
    `Machine: ${machine}; load average at end ${loadAtEnd}.`,
    ...(args.note ? ['', `Note: ${args.note}`] : []),
    '',
    `Data: ${seed.posts.toLocaleString('en-US')} published posts (1–3 KB Markdown bodies, SEO descriptions, 1–4 tags) and ` +
      `${seed.items.toLocaleString('en-US')} roadmap items (every status, category and priority, 90 % public, with their vote rows), ` +
      'loaded by bulk INSERTs through the service’s own database handle, then `ANALYZE`.',
    '',
    `Load: autocannon ${settings.duration} s per case after a ${settings.warmup} s warm-up, ${settings.connections} connections ` +
      `(unless the row says otherwise), pipelining ${settings.pipelining}, loopback. Each server (content service, bare route) runs in ` +
      'a child process of its own; autocannon runs in the parent process, so on this machine load generator, server and ' +
      'PostgreSQL share the same cores. The content service logs one line per request at `info`, as deployed.',
    '',
  ];
  for (const run of runs) {
    lines.push(
      `### ${run.engine === 'pglite' ? 'Embedded database (PGlite)' : 'PostgreSQL'}`,
      '',
      formatTable(
        ['case', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'vs bare', 'answers'],
        run.rows.map((row) => [
          row.name,
          row.connections,
          row.result.rps,
          row.result.p50,
          row.result.p99,
          `${(row.result.rps / run.bare.rps).toFixed(2)}×`,
          answers(row),
        ]),
      ),
      '',
      `GET /blog?limit=20 body: ${run.listBytes.toLocaleString('en-US')} bytes, served by both the service and the bare route.`,
      '',
    );
  }
  lines.push('### Targets', '', ...targetLines(runs));
  return lines.join('\n');
}

function answers(row: Row): string {
  const parts = Object.entries(row.result.statuses).map(([code, count]) => `${count.toLocaleString('en-US')}×${code}`);
  if (row.result.errors) parts.push(`${row.result.errors} errors`);
  return parts.join(', ') || 'none';
}

function targetLines(runs: EngineRun[]): string[] {
  const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
  return runs.flatMap((run) => {
    const find = (prefix: string, connections = settings.connections) =>
      run.rows.find((row) => row.name.startsWith(prefix) && row.connections === connections)?.result;
    const ratio = (result?: LoadResult) => (result ? result.rps / run.bare.rps : 0);
    const blog = ratio(find('GET /blog?limit=20'));
    const roadmap = ratio(find('GET /roadmap'));
    const searchLoaded = find('GET /search');
    const searchAlone = find('GET /search', 1);
    return [
      `- ${run.engine}: public list reads vs bare route — GET /blog ${blog.toFixed(2)}×, GET /roadmap ${roadmap.toFixed(2)}× ` +
        `(target ≥ ${LIST_RATIO_TARGET}×: ${verdict(Math.min(blog, roadmap) >= LIST_RATIO_TARGET)}); ` +
        `search p99 ${searchAlone?.p99 ?? '?'} ms one request at a time (target < ${SEARCH_P99_TARGET_MS} ms: ` +
        `${verdict((searchAlone?.p99 ?? Infinity) < SEARCH_P99_TARGET_MS)}), ${searchLoaded?.p99 ?? '?'} ms under ${settings.connections} connections.`,
    ];
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
