/**
 * The baseline every benchmark compares against: a bare Fastify server (no logger, no hooks, no schema)
 * answering GET routes with JSON documents held in memory. What a service reaches relative to this is
 * what its own work costs; the machine's and Node's share is the same on both sides.
 *
 * Run as a child process: `startBareServer({ '/blog': body, … })` in the parent.
 */
import Fastify from 'fastify';
import { fileURLToPath } from 'node:url';
import { serveChild, startChild, type ChildServer } from './child.js';

/**
 * Route path (without query string, e.g. `/blog`) → the JSON document it answers with, serialized on
 * every request as a route returning an object is. `/stored<path>` answers the same document as text
 * serialized once: the ceiling for a server that keeps responses ready, as a response cache does.
 */
type BareOptions = Record<string, unknown>;

export function startBareServer(documents: BareOptions): Promise<ChildServer<null>> {
  return startChild<null>(fileURLToPath(import.meta.url), documents);
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  serveChild<BareOptions, null>(async (documents) => {
    const app = Fastify({ logger: false });
    for (const [path, body] of Object.entries(documents)) {
      const text = JSON.stringify(body);
      app.get(path, async () => body);
      app.get(`/stored${path}`, (_request, reply) => reply.type('application/json; charset=utf-8').send(text));
    }
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    return { url, info: null, close: () => app.close() };
  });
}
