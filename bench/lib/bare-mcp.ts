/**
 * The MCP baseline the MCP benchmarks compare against: the SDK as its examples serve it, one stateful transport
 * and server per session kept in memory, with one tool (`constant`) answering a fixed text. What a service's
 * tool call reaches relative to this is what its own work costs (authentication, sessions, the domain read).
 *
 * Run as a child process: `startBareMcpServer(text)` in the parent; its endpoint is `POST /mcp`.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import Fastify, { type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { serveChild, startChild, type ChildServer } from './child.js';

const thisFile = fileURLToPath(import.meta.url);

/** A bare SDK server whose `constant` tool answers `constant` (give it the bytes the compared tool answers). */
export function startBareMcpServer(constant: string): Promise<ChildServer<null>> {
  return startChild<null>(thisFile, { constant });
}

if (process.send && process.argv[1] === thisFile) {
  serveChild<{ constant: string }, null>(async ({ constant }) => {
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
    return { url, info: null, close: () => app.close() };
  });
}

function toWebRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(name, value);
  return new Request(`http://${request.headers.host}${request.url}`, { method: request.method, headers });
}
