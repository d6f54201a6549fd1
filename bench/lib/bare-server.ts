/**
 * The baseline the content benchmark compares its public reads with: a bare Fastify server (no logger, no
 * hooks, no schema) answering GET routes with responses held in memory, the body as bytes (encoded once, as the
 * service's public read cache keeps it) and its headers. What a service reaches relative to this is what its own work costs; the
 * machine's and Node's share is the same on both sides.
 *
 * Run as a child process: `startBareServer({ '/blog': { body, headers }, … })` in the parent.
 */
import Fastify from 'fastify';
import { fileURLToPath } from 'node:url';
import { serveChild, startChild, type ChildServer } from './child.js';

/** A response as sent: its body text and its headers (content type, validators, cache policy). */
export interface StoredResponse {
  body: string;
  headers: Record<string, string>;
}

/** Route path, without query string (e.g. `/blog`), → the response it sends, unchanged, on every request. */
type BareOptions = Record<string, StoredResponse>;

export function startBareServer(responses: BareOptions): Promise<ChildServer<null>> {
  return startChild<null>(fileURLToPath(import.meta.url), responses);
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  serveChild<BareOptions, null>(async (responses) => {
    const app = Fastify({ logger: false });
    for (const [path, { body, headers }] of Object.entries(responses)) {
      const bytes = Buffer.from(body);
      app.get(path, (_request, reply) => reply.headers(headers).send(bytes));
    }
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    return { url, info: null, close: () => app.close() };
  });
}
