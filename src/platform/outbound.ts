/**
 * Every call the organization makes to the world — agent deliveries, webhook connectors, the content connector —
 * goes through `sendOutbound` (DESIGN 4.4, "one signed poster"), which holds the rules a receiver cannot bend:
 *
 * - redirects are never followed (`redirect: 'manual'`): a `3xx` is an answer like any other non-2xx, so a
 *   receiver cannot point the server at an internal address or make it re-POST a signed body elsewhere;
 * - the answer is read as a stream, at most `MAX_ANSWER_BYTES`; past it the request is aborted and nothing of
 *   the answer is kept ("answer too large");
 * - one deadline covers the connection, the headers and the whole body, and a read that fails or stalls is an
 *   outcome (`failed`), never an exception, so no caller resends because a read threw;
 * - `Retry-After` (seconds or an HTTP date) on `429` and `503` is parsed for the caller to honour;
 * - the current W3C trace goes along as `traceparent` (trace.ts), so the receiver's work joins the trace.
 *
 * `postSigned` adds the Standard Webhooks signature (webhook-signature.ts): `webhook-id` stays the same on every attempt of
 * one delivery or action, so a receiver drops repeats by it.
 */
import { outgoingTraceparent } from './trace.js';
import { signWebhook } from './webhook-signature.js';

/** The most of an answer that is read (1 MiB). */
export const MAX_ANSWER_BYTES = 1024 * 1024;
/** The most of an answer's text a failure quotes. */
const QUOTED_CHARS = 500;

export interface OutboundRequest {
  url: string;
  method?: 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'GET';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

/** What came of a request: an answer read whole (within the bounds), or why there is none (`reason` reads after "the webhook", "the agent"). */
export type OutboundResult =
  | { kind: 'answer'; status: number; text: string; retryAfterMs?: number }
  | { kind: 'failed'; reason: string };

export async function sendOutbound(request: OutboundRequest): Promise<OutboundResult> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new DOMException('timed out', 'TimeoutError')), request.timeoutMs);
  try {
    const traceparent = outgoingTraceparent();
    const response = await fetch(request.url, {
      method: request.method ?? 'POST',
      headers: traceparent ? { ...request.headers, traceparent } : request.headers,
      body: request.body,
      redirect: 'manual',
      signal: abort.signal,
    });
    const text = await readBounded(response, abort);
    if (text === undefined) return { kind: 'failed', reason: `sent an answer too large to read (over ${MAX_ANSWER_BYTES / 1024 / 1024} MiB); nothing of it was kept` };
    const retryAfterMs = response.status === 429 || response.status === 503 ? parseRetryAfter(response.headers.get('retry-after')) : undefined;
    return { kind: 'answer', status: response.status, text, ...(retryAfterMs !== undefined && { retryAfterMs }) };
  } catch (error) {
    return { kind: 'failed', reason: describeNetworkError(error, request.timeoutMs) };
  } finally {
    clearTimeout(timer);
  }
}

export interface SignedPost {
  url: string;
  /** `whsec_…`; without one the body goes unsigned (a webhook connector without `secret_env`). */
  secret?: string;
  /** The same on every attempt of one delivery or action, so the receiver can drop repeats. */
  webhookId: string;
  body: string;
  timeoutMs: number;
}

/** A JSON POST signed by the Standard Webhooks convention, signed anew per attempt (receivers reject old timestamps). */
export function postSigned(post: SignedPost): Promise<OutboundResult> {
  const signature = post.secret ? signWebhook(post.secret, post.webhookId, post.body) : { 'webhook-id': post.webhookId };
  return sendOutbound({ url: post.url, headers: { 'content-type': 'application/json', ...signature }, body: post.body, timeoutMs: post.timeoutMs });
}

/** What a non-2xx answer says, for a failure message: its status, and its text (bounded) when it has any. */
export function describeRefusal(who: string, answer: { status: number; text: string }): string {
  if (answer.status >= 300 && answer.status < 400) return `${who} answered HTTP ${answer.status}, a redirect, which is never followed`;
  const quoted = quoteAnswer(answer.text);
  return `${who} answered HTTP ${answer.status}${quoted ? `: ${quoted}` : ''}`;
}

/** An answer's text as a failure may quote it: an error message when it is JSON with one, control characters removed, at most 500 characters. */
export function quoteAnswer(text: string): string {
  let quoted = text;
  try {
    const value = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error = typeof value?.error === 'object' && value.error !== null ? (value.error as { code?: unknown; message?: unknown }) : undefined;
    if (error && typeof error.message === 'string') quoted = typeof error.code === 'string' ? `${error.code}: ${error.message}` : error.message;
    else if (typeof value?.error === 'string') quoted = value.error;
    else if (typeof value?.message === 'string') quoted = value.message;
    else if (value === null || (typeof value === 'object' && Object.keys(value).length === 0)) quoted = '';
  } catch {
    // Not JSON: the text itself.
  }
  // eslint-disable-next-line no-control-regex
  quoted = quoted.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return quoted.length > QUOTED_CHARS ? `${quoted.slice(0, QUOTED_CHARS)}…` : quoted;
}

/** The answer as JSON, or its text when it is not JSON, or null when empty. */
export function parseAnswer(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text.slice(0, 2000);
  }
}

/**
 * `Retry-After` in milliseconds from now: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when
 * absent or unreadable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(at - now, 0);
}

/** The body's text, or undefined (and the request aborted) once it passes MAX_ANSWER_BYTES. */
async function readBounded(response: Response, abort: AbortController): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > MAX_ANSWER_BYTES) {
    abort.abort();
    return undefined;
  }
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      abort.abort();
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeNetworkError(error: unknown, timeoutMs: number): string {
  const name = error instanceof Error ? error.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') return `gave no complete answer within ${Math.round(timeoutMs / 1000)} s`;
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : error instanceof Error ? error.message : String(error);
  return `could not be reached: ${cause}`;
}
