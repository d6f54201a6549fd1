/**
 * The MCP baseline the MCP benchmarks compare against: the SDK as its examples serve it, one stateful transport
 * and server per session kept in memory, with one tool (`constant`) answering a fixed text. What a service's
 * tool call reaches relative to this is what its own work costs (authentication, sessions, the domain read).
 *
 * Given a PostgreSQL database and a webhook receiver, it also has a `work` tool: the least any durable action
 * does — a row written before the action (so it is neither lost nor run twice after a crash), a signed POST to
 * the receiver, the row updated with the outcome — two autocommitted statements on a pool of the org's size,
 * and nothing else (no authorization, gate, budget, trail or queue). The floor of execute_capability. Its `post`
 * tool makes the same signed POST and nothing else, no statement at all: the ceiling of any work call that
 * reaches another process over HTTP, durable or not. Both post through the organization's own poster
 * (src/platform/outbound.ts), so the floor and the ceiling move with it.
 *
 * Run as a child process: `startBareMcpServer(text)` in the parent; its endpoint is `POST /mcp`.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import Fastify, { type FastifyRequest } from 'fastify';
import pg from 'pg';
import { z } from 'zod';
import { isSuccess, postSigned } from '../../src/platform/outbound.js';
import { serveChild, startChild, type ChildServer } from './child.js';

const thisFile = fileURLToPath(import.meta.url);

/** Where the `work` tool records and whom it calls. */
export interface BareWork {
  /** A PostgreSQL URL and a scratch schema of the caller's, where the tool creates its table. */
  url: string;
  schema: string;
  receiverUrl: string;
}

/** A bare SDK server whose `constant` tool answers `constant` (give it the bytes the compared tool answers). */
export function startBareMcpServer(constant: string, work?: BareWork): Promise<ChildServer<null>> {
  return startChild<null>(thisFile, { constant, work });
}

if (process.send && process.argv[1] === thisFile) {
  serveChild<{ constant: string; work?: BareWork }, null>(async ({ constant, work }) => {
    const pool = work ? await openWorkPool(work) : undefined;
    const secret = `whsec_${Buffer.from('bare-work-secret').toString('base64')}`;
    const app = Fastify({ logger: false });
    const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
    app.post('/mcp', async (request, reply) => {
      const id = request.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? transports.get(id) : undefined;
      if (!transport) {
        if (id) return reply.code(404).send({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
        const server = new McpServer({ name: 'bare', version: '1.0.0' });
        server.registerTool('constant', { description: 'Answers a constant', inputSchema: z.object({}) }, async () => ({
          content: [{ type: 'text', text: constant }],
        }));
        if (pool && work) {
          /** The signed POST both tools make, through the organization's own poster; resolves with the outcome. */
          const post = async (id: string, input: { text: string }) => {
            const answer = await postSigned({ url: work.receiverUrl, secret, webhookId: id, body: JSON.stringify({ id, input }), timeoutMs: 10_000 });
            const succeeded = answer.kind === 'answer' && isSuccess(answer.status);
            return { status: succeeded ? 'succeeded' : 'failed', result: answer.kind === 'answer' ? answer.text : answer.reason };
          };
          server.registerTool('work', { description: 'A durable action', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => {
            const id = randomUUID();
            await pool.query("INSERT INTO bare_work (id, input, status) VALUES ($1, $2, 'running')", [id, JSON.stringify({ text })]);
            const { status, result } = await post(id, { text });
            await pool.query('UPDATE bare_work SET status = $2, result = $3 WHERE id = $1', [id, status, result]);
            return { content: [{ type: 'text', text: JSON.stringify({ id, status }) }], structuredContent: { id, status } };
          });
          server.registerTool('post', { description: 'The signed POST alone', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => {
            const id = randomUUID();
            const { status } = await post(id, { text });
            return { content: [{ type: 'text', text: JSON.stringify({ id, status }) }], structuredContent: { id, status } };
          });
        }
        const created: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (sessionId) => void transports.set(sessionId, created),
        });
        await server.connect(created);
        transport = created;
      }
      return reply.send(await transport.handleRequest(toWebRequest(request), { parsedBody: request.body }));
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    return { url, info: null, close: async () => (await app.close(), await pool?.end()) };
  });
}

async function openWorkPool(work: BareWork): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: work.url, max: 10, options: `-c search_path="${work.schema}"` });
  await pool.query('CREATE TABLE IF NOT EXISTS bare_work (id text PRIMARY KEY, input jsonb NOT NULL, status text NOT NULL, result text, created_at timestamptz NOT NULL DEFAULT now())');
  return pool;
}

function toWebRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(name, value);
  return new Request(`http://${request.headers.host}${request.url}`, { method: request.method, headers });
}
