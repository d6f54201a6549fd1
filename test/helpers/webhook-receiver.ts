/**
 * A local webhook receiver on port 0, standing in for the world a capability acts on: it records every
 * request (headers and body) and answers 200 with `{received: true}`, or whatever status `answer` sets.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedCall {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  calls: ReceivedCall[];
  answer: { status: number };
  close(): Promise<void>;
}

/**
 * `keepAliveMs`: how long an idle connection stays open (default 1 s, so tests close at once; Node's default 5 s
 * lets a client keep its connections between calls, as a deployed receiver does — fetch drops a connection whose
 * server promises less than 2 s).
 */
export async function startWebhookReceiver(options: { keepAliveMs?: number } = {}): Promise<WebhookReceiver> {
  const calls: ReceivedCall[] = [];
  const answer = { status: 200 };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      calls.push({ path: request.url ?? '/', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify({ received: true }));
    });
  });
  server.keepAliveTimeout = options.keepAliveMs ?? 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    answer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
