/**
 * The HTTP request helper of the service test harnesses (content.ts, org.ts): fetch against a test server,
 * with a JSON or urlencoded body, the response read once as text and, when it parses, as JSON.
 */
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
  const headers: Record<string, string> = { ...options.headers };
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof options.json === 'string' ? options.json : JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  const response = await fetch(url, { method, headers, body, redirect });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}
