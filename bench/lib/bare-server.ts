/**
 * The baseline every benchmark compares against: a bare Fastify server (no logger, no hooks, no schema)
 * answering one GET route with a JSON document held in memory. What a service reaches relative to this is
 * what its own work costs; the machine's and Node's share is the same on both sides.
 *
 * Run as a child process: `startBareServer(path, body)` in the parent.
 */
import Fastify from 'fastify';
import { fileURLToPath } from 'node:url';
import { serveChild, startChild, type ChildServer } from './child.js';

interface BareOptions {
  /** Route path without the query string, e.g. `/blog`. */
  path: string;
  /** The JSON document to answer with; serialized on every request, as a route returning an object is. */
  body: unknown;
}

export function startBareServer(path: string, body: unknown): Promise<ChildServer<null>> {
  return startChild<null>(fileURLToPath(import.meta.url), { path, body } satisfies BareOptions);
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  serveChild<BareOptions, null>(async ({ path, body }) => {
    const app = Fastify({ logger: false });
    app.get(path, async () => body);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    return { url, info: null, close: () => app.close() };
  });
}
