/**
 * The rendered site's revalidation hook (spec 4.4, DESIGN 3) as a real HTTP server on an ephemeral port: it
 * records what it receives and answers as a test tells it to (succeed, fail, or never answer).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: { type: string; slug: string; paths: string[] };
}

/** `redirect`: 307 to another path of the site, which a sender must not follow. */
export type Behaviour = 'ok' | 'fail' | 'hang' | 'redirect';

export interface Site {
  url: string;
  received: Received[];
  /** How the site answers the n-th request (1-based) for a slug; default 'ok'. */
  answer: (slug: string, attempt: number) => Behaviour;
  close(): Promise<void>;
}

/** Starts the site; `onReceive` sees each request as it arrives. */
export async function startSite(options: { onReceive?: (received: Received) => void } = {}): Promise<Site> {
  const received: Received[] = [];
  const site: Site = { url: '', received, answer: () => 'ok', close: async () => {} };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const entry = { method: request.method!, path: request.url ?? '/', authorization: request.headers.authorization, contentType: request.headers['content-type'], body };
      received.push(entry);
      options.onReceive?.(entry);
      const attempt = received.filter((entry) => entry.body.slug === body.slug).length;
      const behaviour = site.answer(body.slug, attempt);
      if (behaviour === 'hang') return;
      if (behaviour === 'redirect') return void response.writeHead(307, { location: '/elsewhere' }).end();
      response.writeHead(behaviour === 'ok' ? 200 : 500, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  site.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/revalidate`;
  site.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return site;
}
