/**
 * The HTTP request helper of the service test harnesses (content.ts, org.ts): fetch against a test server,
 * with a JSON or urlencoded body, the response read once as text and, when it parses, as JSON. Rule tables
 * that need no port send the same request in-process with Fastify's `inject` (`injectRequest`).
 */
import type { HttpServer } from '../../src/platform/http.js';

export interface RequestOptions {
  /** Sent as application/json (a string is sent as it is). */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>;
  body?: BodyInit;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or the text when it is not JSON. */
  body: any;
  text: string;
}

export async function sendRequest(
  url: string,
  method: string,
  options: RequestOptions = {},
  redirect: RequestRedirect = 'follow',
): Promise<TestResponse> {
  const { headers, body } = requestBody(options);
  const response = await fetch(url, { method, headers, body, redirect });
  return testResponse(response.status, response.headers, await response.text());
}

/**
 * The same request as `sendRequest`, answered in-process by Fastify's `inject` (light-my-request): no port,
 * no socket, every hook and the error mapper as over HTTP. Redirects are not followed.
 */
export async function injectRequest(app: HttpServer, path: string, method: string, options: RequestOptions = {}): Promise<TestResponse> {
  const { headers, body } = requestBody(options);
  const payload = body instanceof Uint8Array ? Buffer.from(body) : (body as string | FormData | undefined);
  const response = await app.inject({ method: method as 'GET', url: path, headers, payload });
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    for (const one of Array.isArray(value) ? value : [value]) if (one !== undefined) responseHeaders.append(name, String(one));
  }
  return testResponse(response.statusCode, responseHeaders, response.body);
}

function requestBody(options: RequestOptions): { headers: Record<string, string>; body: BodyInit | undefined } {
  const headers: Record<string, string> = { ...options.headers };
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof options.json === 'string' ? options.json : JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  return { headers, body };
}

function testResponse(status: number, headers: Headers, text: string): TestResponse {
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status, headers, body: parsed, text };
}
