/**
 * A small HTTP proxy that adds `Authorization: Bearer <token>` to every request and passes everything else through
 * untouched — Host and Origin included, so the server's DNS-rebinding checks see what the client sent, and
 * streamed bodies (SSE) flow as they come. It lets a test client that knows nothing of our credentials (the
 * conformance suite) reach a protected MCP endpoint without any bypass in the server itself.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TokenProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

export async function startTokenProxy(target: string, token: string): Promise<TokenProxy> {
  const upstream = new URL(target);
  const server = http.createServer((request, response) => {
    const headers = { ...request.headers, authorization: `Bearer ${token}` };
    const forwarded = http.request(
      { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    response.on('close', () => forwarded.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
