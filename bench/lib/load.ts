/**
 * One measured case: a warm-up run that is thrown away (JIT, caches, connection pools), then the measured
 * run with the same settings. Every case of a benchmark uses the same `LoadSettings`, so rows compare.
 */
import autocannon from 'autocannon';

export interface LoadSettings {
  /** Measured seconds per case. */
  duration: number;
  /** Seconds of warm-up before each measured run; 0 skips it. */
  warmup: number;
  connections: number;
  pipelining: number;
}

/**
 * The command-line options every org benchmark shares (`parseArgs` options): the load settings, which engines,
 * a note for the report and `--dry-run` (print, do not write bench/RESULTS.md). A benchmark adds its own.
 */
export const loadOptions = {
  duration: { type: 'string', default: '10' },
  warmup: { type: 'string', default: '2' },
  connections: { type: 'string', default: '20' },
  engines: { type: 'string', default: 'pglite,postgres' },
  note: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
} as const;

/** The load settings given by `loadOptions`. */
export function loadSettingsOf(args: { duration: string; warmup: string; connections: string }): LoadSettings {
  return { duration: Number(args.duration), warmup: Number(args.warmup), connections: Number(args.connections), pipelining: 1 };
}

export interface LoadCase {
  method?: 'GET' | 'POST' | 'DELETE' | 'PATCH' | 'PUT';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Called for every request, to vary it (autocannon's `setupRequest`), e.g. a distinct voter per vote. */
  vary?: (request: autocannon.Request) => void;
}

export interface LoadResult {
  /** Completed requests per second over the measured run. */
  rps: number;
  /** Latency percentiles in milliseconds (autocannon records whole milliseconds). */
  p50: number;
  p99: number;
  max: number;
  requests: number;
  /** Responses by status class; anything but the expected status means the case measured the wrong thing. */
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
}

export async function measure(url: string, loadCase: LoadCase, settings: LoadSettings): Promise<LoadResult> {
  if (settings.warmup > 0) await run(url, loadCase, { ...settings, duration: settings.warmup });
  return summarize(await run(url, loadCase, settings));
}

function run(url: string, loadCase: LoadCase, settings: LoadSettings): Promise<autocannon.Result> {
  const request: autocannon.Request = {
    method: loadCase.method ?? 'GET',
    path: loadCase.path,
    headers: loadCase.headers,
    body: loadCase.body,
  };
  if (loadCase.vary) {
    const vary = loadCase.vary;
    request.setupRequest = (current) => {
      vary(current);
      return current;
    };
  }
  return autocannon({
    url,
    connections: settings.connections,
    pipelining: settings.pipelining,
    duration: settings.duration,
    requests: [request],
    // 304 and other non-2xx answers still count toward latency: a conditional GET is a real answer.
    excludeErrorStats: false,
  });
}

/** The figures a results table shows, from one autocannon run. */
export function summarize(result: autocannon.Result): LoadResult {
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = stat.count ?? 0;
  return {
    rps: Math.round(result.requests.total / result.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
