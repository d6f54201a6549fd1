/**
 * `npm run bench:org-capabilities` — `execute_capability` of a low-risk webhook capability through the runtime
 * gate, round trips per second under load, beside `service_context` measured in the same run on the same
 * service (target: execute_capability at ≥ 0.3× service_context's calls per second on PostgreSQL).
 *
 * Each execute_capability call is a full MCP `tools/call` over HTTP on an initialized session with an OAuth
 * access token from the real flow: idempotency handling, the operation row and its job, a worker claiming it,
 * the gate's inputs loaded and its verdict stored, the agent's usage charged, a signed POST to a local
 * receiver (a plain node:http server answering 200), the operation completed, and the waiting call woken with
 * the succeeded operation. The capability is allowed by a standing rule, so the client's autonomy does not
 * pause it. This section is meant to be folded into `bench:org` as one more case.
 *
 *   npm run bench:org-capabilities [-- --duration 10 --warmup 2 --connections 20 --engines pglite,postgres --note TEXT --dry-run]
 *
 * The org service runs in this process (as the end-to-end tests start it); both rows share that, so the ratio
 * compares like with like. PostgreSQL: BENCH_DATABASE_URL or TEST_DATABASE_URL, in a fresh scratch schema.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startWebhookReceiver } from '../test/org/webhook-receiver.js';
import { connectClient, openMcpSession } from '../test/org/oauth-flow.js';
import { OWNER, startOrg } from '../test/helpers/org.js';
import { loadOptions, loadSettingsOf, measure, type LoadCase, type LoadSettings } from './lib/load.js';
import { describeMachine, machineInfo } from './lib/machine.js';
import { formatTable, writeResultsSection } from './lib/report.js';

type Engine = 'pglite' | 'postgres';
const RATIO_TARGET = 0.3;

const { values: args } = parseArgs({
  options: loadOptions,
});
const settings: LoadSettings = loadSettingsOf(args);

interface Row {
  engine: Engine;
  case: string;
  callsPerSecond: number;
  p50: number;
  p99: number;
  calls: number;
  failures: number;
}

async function benchEngine(engine: Engine): Promise<Row[]> {
  if (engine === 'postgres') {
    const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('BENCH_DATABASE_URL or TEST_DATABASE_URL is needed for postgres');
    process.env.TEST_DATABASE_URL = url;
  }
  const receiver = await startWebhookReceiver();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-bench-cap-'));
  const orgFile = path.join(dir, 'org.yaml');
  process.env.BENCH_HOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
  await writeFile(
    orgFile,
    `spaces: [{ key: general, name: General, members: [${OWNER.email}] }]
capabilities:
  - { key: bench_notify, name: Bench notify, risk: low, connector: { kind: webhook, url: "${receiver.url}/hook", secret_env: BENCH_HOOK_SECRET },
      input_schema: { type: object, required: [text], properties: { text: { type: string } } } }
rules: [{ name: Bench may notify, when: { capability: bench_notify }, then: allow }]
`,
  );
  const org = await startOrg(engine, { config: { orgFile, logLevel: 'warn' } });
  try {
    const token = await connectClient(org, { scopes: ['integrations:read', 'integrations:act'] });
    const headers = { ...(await openMcpSession(org, token.accessToken)), 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const call = async (name: string, toolArgs: Record<string, unknown>) => {
      const response = await fetch(`${org.url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: toolArgs } }) });
      const text = await response.text();
      try {
        return JSON.parse(text).result ?? { isError: true, status: response.status, text };
      } catch {
        return { isError: true, status: response.status, text };
      }
    };
    const context = (await call('service_context', {})).structuredContent;
    const capability = (await call('list_capabilities', {})).structuredContent.capabilities[0];
    const executeArgs = { capability_id: capability.id, input: { text: 'bench' }, space_id: context.spaces[0].id, wait_seconds: 10 };
    const probe = (await call('execute_capability', executeArgs)).structuredContent;
    if (probe.status !== 'succeeded') throw new Error(`execute_capability did not succeed: ${JSON.stringify(probe)}`);

    const rows: Row[] = [];
    for (const [label, name, toolArgs, check] of [
      ['service_context', 'service_context', {}, (result: any) => !result.isError],
      ['execute_capability (low-risk webhook)', 'execute_capability', executeArgs, (result: any) => result.structuredContent?.status === 'succeeded'],
    ] as const) {
      let id = 0;
      let sampled = 0;
      let failed = 0;
      const body = () => JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: toolArgs } });
      const loadCase: LoadCase = {
        method: 'POST',
        path: '/mcp',
        headers,
        body: body(),
        // autocannon does not read bodies: every 200th call is repeated and its result checked.
        vary(request) {
          request.body = body();
          if (id % 200 === 0) {
            sampled += 1;
            void call(name, toolArgs).then((result) => {
              if (check(result)) return;
              failed += 1;
              if (failed === 1) console.warn(`[${engine}] ${name}: ${String(JSON.stringify(result)).slice(0, 300)}`);
            });
          }
        },
      };
      const before = receiver.calls.length;
      const result = await measure(org.url, loadCase, settings);
      const ok = result.statuses['200'] ?? 0;
      rows.push({ engine, case: label, callsPerSecond: result.rps, p50: result.p50, p99: result.p99, calls: result.requests, failures: result.requests - ok + result.errors + result.timeouts + failed });
      if (name !== 'service_context') console.log(`[${engine}] receiver got ${receiver.calls.length - before} signed calls; ${sampled} sampled results checked`);
      console.log(`[${engine}] ${label}: ${result.rps} calls/s, p50 ${result.p50} ms, p99 ${result.p99} ms`);
    }
    return rows;
  } finally {
    await org.close();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const engines = args.engines.split(',') as Engine[];
const rows: Row[] = [];
for (const engine of engines) rows.push(...(await benchEngine(engine)));

const table = formatTable(
  ['engine', 'case', 'calls/s', 'p50 ms', 'p99 ms', 'calls', 'failures'],
  rows.map((row) => [row.engine, row.case, row.callsPerSecond, row.p50, row.p99, row.calls, row.failures]),
);
const targets = engines.map((engine) => {
  const [baseline, execute] = rows.filter((row) => row.engine === engine);
  const ratio = execute.callsPerSecond / baseline.callsPerSecond;
  return `- ${engine}: execute_capability at ${ratio.toFixed(2)}× service_context (target ≥ ${RATIO_TARGET}×${engine === 'postgres' ? '' : ', measured on PostgreSQL'}): ${ratio >= RATIO_TARGET ? 'met' : 'missed'}`;
});
const markdown = `${describeMachine(machineInfo())}\n\n${settings.connections} connections, ${settings.duration} s after ${settings.warmup} s warm-up.${args.note ? ` ${args.note}` : ''}\n\n${table}\n\n${targets.join('\n')}\n`;
console.log(`\n${markdown}`);
if (!args['dry-run']) await writeResultsSection('org-capabilities', markdown);
process.exit(0);
