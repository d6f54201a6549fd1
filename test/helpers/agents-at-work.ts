/**
 * The far side of a delivery for the end-to-end tests: the example agent (examples/agent/index.js) run as
 * the child process a user would run, and a scripted webhook receiver for answers the example never gives
 * (5xx, 4xx, silence). Both are real HTTP servers on ephemeral ports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';

export const EXAMPLE_AGENT = path.resolve('examples/agent/index.js');

/** A Standard Webhooks secret: `whsec_` and base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface LoggedLines {
  /** Every JSON line the process printed so far. */
  lines: Record<string, any>[];
  /** Resolves with the first line (already printed or still to come) that matches. */
  waitFor(match: (line: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
}

/** Collects a child's JSON stdout lines. */
export function jsonLines(child: ChildProcess): LoggedLines {
  const lines: Record<string, any>[] = [];
  const waiters: Array<() => void> = [];
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line));
    } catch {
      return;
    }
    waiters.splice(0).forEach((wake) => wake());
  });
  return {
    lines,
    waitFor(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching line in ${JSON.stringify(lines)}`)), timeoutMs);
        const check = () => {
          const found = lines.find(match);
          if (found) {
            clearTimeout(timer);
            resolve(found);
          } else waiters.push(check);
        };
        check();
      });
    },
  };
}

export interface ExampleAgent extends LoggedLines {
  url: string;
  close(): Promise<void>;
}

/** `node examples/agent/index.js` on port 0; its first line names the port. */
export async function startExampleAgent(secret: string): Promise<ExampleAgent> {
  const child = spawn(process.execPath, [EXAMPLE_AGENT], {
    env: { ...process.env, PORT: '0', AGENT_SECRET: secret, WORK_DELAY_MS: '20' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const logged = jsonLines(child);
  const { port } = await logged.waitFor((line) => line.event === 'listening', 10_000);
  return {
    ...logged,
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface ReceivedDelivery {
  headers: http.IncomingHttpHeaders;
  body: any;
  raw: string;
}

/** How the receiver answers a delivery: a status, headers (such as Retry-After) and a JSON body, or `hang` to never answer. */
export type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  received: ReceivedDelivery[];
  /** Resolves once `count` deliveries arrived. */
  waitForCount(count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

/** A webhook receiver answering each delivery with `answer(delivery, index)`. */
export async function startReceiver(answer: (delivery: ReceivedDelivery, index: number) => Answer): Promise<Receiver> {
  const received: ReceivedDelivery[] = [];
  const waiters: Array<() => void> = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const delivery = { headers: request.headers, body: JSON.parse(raw), raw };
      received.push(delivery);
      waiters.splice(0).forEach((wake) => wake());
      const reply = answer(delivery, received.length - 1);
      if (reply === 'hang') return void hanging.add(response);
      response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(JSON.stringify(reply.body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    waitForCount(count, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${received.length} of ${count} deliveries arrived`)), timeoutMs);
        const check = () => {
          if (received.length >= count) {
            clearTimeout(timer);
            resolve(received);
          } else waiters.push(check);
        };
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        hanging.forEach((response) => response.destroy());
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A local port nothing listens on (bound and released), for an agent that cannot be reached. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
