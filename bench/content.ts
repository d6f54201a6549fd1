/**
 * `npm run bench:content` — throughput and latency of the content REST API's hot routes
 * with 10,000 published posts and 1,000 roadmap items loaded, on the embedded database and on PostgreSQL,
 * next to a bare Fastify route sending the very bytes the service sends for each public read (`GET
 * /blog?limit=20`, `/blog/:slug`, `/changelog`, `/roadmap`: body, content type and validators, the body stored as bytes),
 * in one run with the same autocannon settings.
 *
 * Each server runs in a child process of its own; autocannon runs in this process. The "no read cache" rows
 * run against a content service started with `readCaches: false` (both read caches off), one after the other
 * with the deployed, cached one on the same database. Targets (issue 22): anonymous public reads at ≥ 0.8× the
 * bare route's requests/s; search p99 < 20 ms at 10,000 posts (on the uncached service, one request at a time).
 *
 * Each public read and its bare route are measured in `--rounds` rounds, one after the other in alternating
 * order (bare first, then the service first, …), so both meet the same moments of a shared machine; the ratio is
 * the median of the rounds' ratios, and the rows give the round of median rate.
 *
 *   npm run bench:content [-- --duration 10 --warmup 2 --connections 50 --rounds 5 --engines pglite,postgres
 *                             --posts 10000 --items 1000 --cpu-prof DIR --note TEXT --dry-run]
 *
 * PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL, in a scratch schema dropped afterwards.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import type { DatabaseConfig } from '../src/config.js';
import { dropSchema } from '../src/platform/database.js';
import { startBareServer, type StoredResponse } from './lib/bare-server.js';
import { BENCH_SECRET, startContentServer } from './lib/content-server.js';
import type { SeedFacts } from './lib/content-seed.js';
import { measure, type LoadCase, type LoadResult, type LoadSettings } from './lib/load.js';
import { describeMachine, machineInfo } from './lib/machine.js';
import { formatTable, writeResultsSection } from './lib/report.js';

type Engine = 'pglite' | 'postgres';

const READ_RATIO_TARGET = 0.8;
const SEARCH_P99_TARGET_MS = 20;

/** The public reads, each compared with a bare route sending the very bytes the service sent for it. */
const READS = ['blog', 'post', 'changelog', 'roadmap'] as const;
type Read = (typeof READS)[number];

interface Row {
  name: string;
  connections: number;
  expected: number;
  result: LoadResult;
  /** The bare route this row is compared with. */
  baseline?: Read;
  /** Requests/s of each round, when the row was measured in rounds (the public reads and their bare routes). */
  rounds?: number[];
}

interface EngineRun {
  engine: Engine;
  facts: SeedFacts;
  rows: Row[];
  /** The path of each read (the post's slug is the newest post's). */
  paths: Record<Read, string>;
  bare: Record<Read, LoadResult>;
  /** Each public read's rate over its bare route's, per round (in the order run), and their median. */
  ratios: Record<Read, { rounds: number[]; median: number }>;
  /** Bytes of each read's body, sent alike by the service and the bare route. */
  bytes: Record<Read, number>;
}

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    engines: { type: 'string', default: 'pglite,postgres' },
    posts: { type: 'string', default: '10000' },
    items: { type: 'string', default: '1000' },
    /** Rounds of each public read and its bare route, run alternately; the rows give the median round. */
    rounds: { type: 'string', default: '5' },
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
const rounds = Number(args.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a whole number ≥ 1');
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
  const cpuProfDir = args['cpu-prof'] ? path.resolve(args['cpu-prof'], engine) : undefined;
  /** One content service child; both read the same database (PGlite: the same data directory, one at a time). */
  const startService = async (readCaches: boolean, seedOptions?: typeof seed) => {
    const logFile = path.join(os.tmpdir(), `atrium-bench-content-${engine}-${readCaches ? 'cached' : 'uncached'}.log`);
    const server = await startContentServer({ database, dataDir, seed: seedOptions, readCaches }, { cpuProfDir, stdoutFile: logFile });
    console.log(`[${engine}] content service with read caches ${readCaches ? 'on' : 'off'}: pid ${server.pid}, log ${logFile}`);
    return server;
  };

  console.log(`[${engine}] starting the content service (read caches off) and loading ${seed.posts} posts, ${seed.items} items…`);
  // Phase 1: the "no read cache" rows, on a service started with `readCaches: false`, which also loads the data.
  let content = await startService(false, seed);
  const facts = content.info!;
  console.log(
    `[${engine}] loaded in ${facts.seconds} s: ${facts.votes} votes; "${facts.search.common.word}" in ${facts.search.common.posts} posts, ` +
      `"${facts.search.rare.word}" in ${facts.search.rare.posts}`,
  );
  try {
    const [newest] = (JSON.parse((await fetchRead(content.url, '/blog?limit=1')).body) as { posts: Array<{ slug: string }> }).posts;
    const paths: Record<Read, string> = { blog: '/blog?limit=20', post: `/blog/${newest.slug}`, changelog: '/changelog', roadmap: '/roadmap' };
    const responses = {} as Record<Read, StoredResponse>;
    for (const read of READS) responses[read] = await fetchRead(content.url, paths[read]);
    const bareServer = await startBareServer(Object.fromEntries(READS.map((read) => [`/stored${paths[read].split('?')[0]}`, responses[read]])));
    try {
      /** Every row in report order; `on` says which server answers it. */
      type Planned = {
        name: string;
        on: 'bare' | 'cached' | 'uncached';
        loadCase: LoadCase;
        options?: Partial<Omit<Row, 'name' | 'result'>>;
        check?: () => Promise<void>;
        /** The public read this row (or its bare route) is measured in rounds for. */
        paired?: Read;
      };
      const plan: Planned[] = [];
      for (const read of READS) {
        const path = paths[read];
        plan.push({ name: bareRowName(path), on: 'bare', loadCase: { path: `/stored${path}` }, options: { baseline: read }, paired: read });
        plan.push({ name: `GET ${path}`, on: 'cached', loadCase: { path }, options: { baseline: read }, paired: read });
        const etag = responses[read].headers.etag;
        if (etag) plan.push({ name: `GET ${path} with If-None-Match`, on: 'cached', loadCase: { path, headers: { 'if-none-match': etag } }, options: { expected: 304, baseline: read } });
        plan.push({ name: `GET ${path}, authenticated (no read cache)`, on: 'uncached', loadCase: { path, headers: authenticated }, options: { baseline: read } });
      }
      const { common, rare } = facts.search;
      plan.push({ name: `GET /search?query=${common.word}`, on: 'cached', loadCase: { path: `/search?query=${common.word}` } });
      const spelledAnew = (word: string, connections = settings.connections): Planned => ({
        name: `GET /search?query=${word}, spelled anew each time (no read cache)`,
        on: 'uncached',
        loadCase: uncachedSearch(word),
        options: { connections },
        check: () => expectSameAnswer(content.url, `/search?query=${word}`, `/search?query=${spell(word, 12_345)}`),
      });
      for (const word of [common.word, rare.word]) plan.push(spelledAnew(word));
      // Unloaded latency: one request at a time, so p99 is the time a search takes, not time spent queueing.
      for (const word of [common.word, rare.word]) plan.push(spelledAnew(word, 1));
      plan.push({ name: 'POST /roadmap/:slug/vote (distinct voters)', on: 'cached', loadCase: voteCase(facts.votableSlugs) });

      const measured = new Map<Planned, Row>();
      const once = async (planned: Planned, url: string) => {
        const { expected = 200, connections = settings.connections } = planned.options ?? {};
        await planned.check?.();
        await expectStatus(url, planned.loadCase, expected);
        const result = await measure(url, planned.loadCase, { ...settings, connections });
        console.log(`[${engine}] ${planned.name} (${connections} conns): ${result.rps} req/s, p99 ${result.p99} ms ${statusSummary(result, expected)}`);
        // Let requests still queued in the server drain, so they do not weigh on the next case.
        await setTimeout(1_000);
        return result;
      };
      const record = (planned: Planned, result: LoadResult, roundRates?: number[]) => {
        const { expected = 200, connections = settings.connections, baseline } = planned.options ?? {};
        measured.set(planned, { name: planned.name, result, expected, connections, baseline, rounds: roundRates });
      };
      const urlOf = (planned: Planned) => (planned.on === 'bare' ? bareServer.url : content.url);
      const ratios = {} as Record<Read, { rounds: number[]; median: number }>;

      for (const planned of plan.filter((row) => row.on === 'uncached')) record(planned, await once(planned, content.url));
      // Phase 2: the same database under a service with its read caches on, as deployed: each public read and its
      // bare route in alternating rounds, then the other cached rows and the votes (last, as they change the data).
      await content.stop();
      content = await startService(true);
      for (const read of READS) {
        const [bareRow, serviceRow] = plan.filter((row) => row.paired === read);
        const bareResults: LoadResult[] = [];
        const serviceResults: LoadResult[] = [];
        for (let round = 0; round < rounds; round += 1) {
          const order = round % 2 === 0 ? [bareRow, serviceRow] : [serviceRow, bareRow];
          for (const planned of order) (planned === bareRow ? bareResults : serviceResults).push(await once(planned, urlOf(planned)));
        }
        const roundRatios = serviceResults.map((result, round) => result.rps / bareResults[round].rps);
        ratios[read] = { rounds: roundRatios, median: median(roundRatios) };
        record(bareRow, medianRound(bareResults), bareResults.map((result) => result.rps));
        record(serviceRow, medianRound(serviceResults), serviceResults.map((result) => result.rps));
      }
      for (const planned of plan.filter((row) => row.on !== 'uncached' && !row.paired)) record(planned, await once(planned, urlOf(planned)));

      const rows = plan.map((planned) => measured.get(planned)!);
      const perRead = <T>(value: (read: Read) => T) => Object.fromEntries(READS.map((read) => [read, value(read)])) as Record<Read, T>;
      const bare = perRead((read) => rows.find((row) => row.name === bareRowName(paths[read]))!.result);
      return { engine, facts, rows, paths, bare, ratios, bytes: perRead((read) => Buffer.byteLength(responses[read].body)) };
    } finally {
      await bareServer.stop();
    }
  } finally {
    await content.stop();
    if (database.url) await dropSchema(database.url, schema);
    await rm(dataDir, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The round whose rate is the median (the lower middle one of an even count), with its latencies. */
function medianRound(results: readonly LoadResult[]): LoadResult {
  const sorted = [...results].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

const bareRowName = (path: string) => `bare Fastify route, same stored bytes as ${path}`;

/** The headers of a public read the bare route repeats with its body: what a response cache keeps with it. */
const STORED_HEADERS = ['content-type', 'etag', 'vary', 'cache-control'];

/** A public read as the service answers an anonymous reader: the body and headers the bare route will send. */
async function fetchRead(url: string, path: string): Promise<StoredResponse> {
  const response = await fetch(url + path);
  const body = await response.text();
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${body.slice(0, 300)}`);
  const headers = Object.fromEntries(STORED_HEADERS.flatMap((name) => (response.headers.has(name) ? [[name, response.headers.get(name)!]] : [])));
  return { body, headers };
}

const authenticated = { authorization: `Bearer ${BENCH_SECRET}` };

/**
 * A search nobody asked for a second ago: the query's letters are upper-cased and percent-encoded in a
 * different pattern each time, so every URL misses the public read cache (keyed on the raw URL) while the
 * decoded, case-insensitive query — and so the database work and the answer — stays the same.
 */
function uncachedSearch(word: string): LoadCase {
  let counter = 1;
  return {
    path: `/search?query=${spell(word, counter)}`,
    vary(request) {
      counter += 1;
      request.path = `/search?query=${spell(word, counter)}`;
    },
  };
}

/** Spelling number `n` of `word`: each letter, by one base-4 digit of n, as-is, upper, %xx, or %XX of upper. */
function spell(word: string, n: number): string {
  return [...word]
    .map((letter, i) => {
      const digit = Math.floor(n / 4 ** i) % 4;
      const chosen = digit % 2 === 0 ? letter : letter.toUpperCase();
      return digit < 2 ? chosen : `%${chosen.charCodeAt(0).toString(16).toUpperCase()}`;
    })
    .join('');
}

async function expectSameAnswer(url: string, canonical: string, variant: string): Promise<void> {
  const [a, b] = await Promise.all([canonical, variant].map((route) => fetch(url + route).then((response) => response.text())));
  if (a !== b) throw new Error(`${variant} does not answer as ${canonical} does: the uncached search rows would measure something else`);
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
  const quote = (arg: string) => (/^[\w,./:=-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`);
  const given = process.argv.slice(2).map(quote);
  const command = ['npm run bench:content', ...(given.length ? ['--', ...given] : [])].join(' ');
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
      'loaded by bulk INSERTs through the service’s own database handle; then `VACUUM ANALYZE` on PostgreSQL (what autovacuum ' +
      'does by itself shortly after such a load) and nothing on PGlite, which runs no autovacuum and which Atrium does not maintain.',
    '',
    `Load: autocannon ${settings.duration} s per case after a ${settings.warmup} s warm-up, ${settings.connections} connections ` +
      `(unless the row says otherwise), pipelining ${settings.pipelining}, loopback. Each server (content service, bare route) runs in ` +
      'a child process of its own; autocannon runs in the parent process, so on this machine load generator, server and ' +
      'PostgreSQL share the same cores. The content service logs at `info`, as deployed (request lines are at debug).',
    '',
    'Baseline: a bare Fastify server (no logger, no hooks, no schemas) sending, for each public read, the very bytes the ' +
      'service sent an anonymous reader: the body as bytes and its headers (content type, ETag, Vary, Cache-Control), stored ' +
      'once, as the service’s public read cache stores them. The "vs bare" column divides each row’s rate by that route’s. ' +
      `Each public read and its bare route ran in ${rounds} round${rounds === 1 ? '' : 's'}, alternately (bare first in the first round, ` +
      'the service first in the next, …), so both met the same moments of a shared machine: their rows give the round of ' +
      'median rate, and their "vs bare" the median of the rounds’ ratios (each round’s below the table).',
    '',
    'Caches: as deployed, the service keeps two read caches, both emptied by the change feed when a content write commits ' +
      '(with a 60 s safety TTL for writes that bypass the domain layer): the REST public cache of serialized anonymous GET ' +
      'responses, and the domain read cache of query results, which also serves authenticated reads and every search. The ' +
      'rows marked "(no read cache)" are therefore answered by a second content service started with `readCaches: false` ' +
      '(a `ContentServiceOptions` flag for benchmarks and diagnostics that turns both off), so every one of their requests ' +
      'runs its queries on the database. The two services run one after the other on the same database (the embedded ' +
      'database serves one process at a time; PostgreSQL is done the same way for one code path): first the caches-off ' +
      'service, which loads the data, for the "no read cache" rows; then, on that same data, a service with its caches on for ' +
      'the bare routes, the other rows and the votes (last, since they change the data). The search rows "spelled anew" still ' +
      'vary the letters’ case and percent-encoding per request (the query, and so the answer, stays the same), a leftover ' +
      'that changes nothing with the caches off.',
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
          vsBare(run, row),
          answers(row),
        ]),
      ),
      '',
      `Rounds (req/s of the bare route → the service, in the order run): ${READS.map(
        (read) =>
          `GET ${run.paths[read]} ${run.ratios[read].rounds
            .map((ratio, round) => {
              const rates = (name: string) => run.rows.find((row) => row.name === name)!.rounds![round].toLocaleString('en-US');
              return `${rates(bareRowName(run.paths[read]))} → ${rates(`GET ${run.paths[read]}`)} (${ratio.toFixed(2)}×)`;
            })
            .join(', ')}`,
      ).join('; ')}.`,
      '',
      `Bodies: ${READS.map((read) => `GET ${run.paths[read]} ${run.bytes[read].toLocaleString('en-US')} bytes`).join(', ')}, ` +
        'each sent alike by the service and the bare route.',
      '',
    );
  }
  lines.push('### Targets', '', ...targetLines(runs));
  return lines.join('\n');
}

/** A row's rate over its bare route's; for a public read measured in rounds, the median of the rounds' ratios. */
function vsBare(run: EngineRun, row: Row): string {
  if (!row.baseline) return '';
  const paired = row.rounds && row.name === `GET ${run.paths[row.baseline]}`;
  return `${(paired ? run.ratios[row.baseline].median : row.result.rps / run.bare[row.baseline].rps).toFixed(2)}×`;
}

function answers(row: Row): string {
  const parts = Object.entries(row.result.statuses).map(([code, count]) => `${count.toLocaleString('en-US')}×${code}`);
  if (row.result.errors) parts.push(`${row.result.errors} errors`);
  return parts.join(', ') || 'none';
}

function targetLines(runs: EngineRun[]): string[] {
  const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
  return runs.flatMap((run) => {
    const find = (name: string, connections = settings.connections) =>
      run.rows.find((row) => row.name === name && row.connections === connections)?.result;
    const ratios = READS.map((read) => ({ path: run.paths[read], ratio: run.ratios[read].median }));
    const searches = [run.facts.search.common, run.facts.search.rare].map(({ word, posts }) => {
      const name = `GET /search?query=${word}, spelled anew each time (no read cache)`;
      return { word, posts, alone: find(name, 1)?.p99 ?? Infinity, loaded: find(name)?.p99 ?? Infinity };
    });
    const searchOk = searches.every((search) => search.alone < SEARCH_P99_TARGET_MS);
    return [
      `- ${run.engine}: anonymous public reads vs the bare route sending the same stored bytes, median of ${rounds} alternating rounds — ` +
        ratios.map(({ path, ratio }) => `GET ${path} ${ratio.toFixed(2)}×`).join(', ') +
        ` (target ≥ ${READ_RATIO_TARGET}×: ${verdict(Math.min(...ratios.map(({ ratio }) => ratio)) >= READ_RATIO_TARGET)}).`,
      `- ${run.engine}: search p99 without the read cache, one request at a time — ` +
        searches.map((search) => `"${search.word}" (${search.posts} posts) ${search.alone} ms`).join(', ') +
        ` (target < ${SEARCH_P99_TARGET_MS} ms: ${verdict(searchOk)}); under ${settings.connections} connections ` +
        searches.map((search) => `${search.loaded} ms`).join(' and ') +
        ', which is mostly queueing (Little’s law: latency ≈ connections ÷ throughput).',
    ];
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
