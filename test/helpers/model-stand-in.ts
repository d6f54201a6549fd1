/**
 * A local stand-in for an OpenAI-compatible model server (never a real provider): `POST /v1/chat/completions`
 * on port 0, answering with whatever the test's `reply` returns for each request — a completion text, an
 * HTTP error, or a delay longer than the client's timeout. Every request body is kept for assertions.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  model: string;
  messages: Array<{ role: string; content: string }>;
  [key: string]: unknown;
}

export type StandInReply =
  | { content: string }
  | { status: number; error: string }
  /** Answers only after this many ms (or never, if the client hangs up first). */
  | { delayMs: number; content: string };

export interface ModelStandIn {
  /** The `LLM_BASE_URL` to configure. */
  baseUrl: string;
  requests: ChatRequest[];
  reply: (request: ChatRequest) => StandInReply;
  close(): Promise<void>;
}

export async function startModelStandIn(): Promise<ModelStandIn> {
  const standIn: ModelStandIn = {
    baseUrl: '',
    requests: [],
    reply: () => ({ content: 'No reply configured.' }),
    close: async () => {},
  };
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
    standIn.requests.push(body);
    const reply = standIn.reply(body);
    if ('status' in reply) {
      response.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: reply.error, type: 'server_error' } }));
      return;
    }
    if ('delayMs' in reply) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (response.destroyed) return;
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: 'chatcmpl-stand-in',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: reply.content } }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  standIn.baseUrl = `http://127.0.0.1:${port}/v1`;
  standIn.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return standIn;
}
