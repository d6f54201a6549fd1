/**
 * Every call the organization makes to the world — agent deliveries, webhook connectors, the content connector —
 * goes through `sendOutbound` (DESIGN 4.4, "one signed poster"), which holds the rules a receiver cannot bend:
 *
 * - redirects are never followed (node:http never does): a `3xx` is an answer like any other non-2xx, so a
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
import http from 'node:http';
import https from 'node:https';
import { outgoingTraceparent } from './trace.js';
import { signWebhook } from './webhook-signature.js';

/** The most of an answer that is read (1 MiB). */
export const MAX_ANSWER_BYTES = 1024 * 1024;
/** Who is calling, for the receiver's logs (some gateways refuse a request without one). */
const USER_AGENT = 'Atrium';
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

export function sendOutbound(request: OutboundRequest): Promise<OutboundResult> {
  // node:http rather than fetch: the same rules at a fifth of the CPU per call (fetch builds WHATWG streams,
  // headers and an abort signal for every request; bench/RESULTS.md, session 37), on the same keep-alive
  // connections (Node's global agents keep them alive) — and it never follows a redirect or decompresses.
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: OutboundResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const tooLarge = (): OutboundResult => ({ kind: 'failed', reason: `sent an answer too large to read (over ${MAX_ANSWER_BYTES / 1024 / 1024} MiB); nothing of it was kept` });
    const timer = setTimeout(() => {
      settle({ kind: 'failed', reason: `gave no complete answer within ${Math.round(request.timeoutMs / 1000)} s` });
      outgoing?.destroy();
    }, request.timeoutMs);
    let outgoing: http.ClientRequest | undefined;
    try {
      const url = new URL(request.url);
      const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
      if (!client) return settle({ kind: 'failed', reason: `could not be reached: ${url.protocol} is not http or https` });
      const traceparent = outgoingTraceparent();
      const headers: http.OutgoingHttpHeaders = { 'user-agent': USER_AGENT, ...request.headers, ...(traceparent && { traceparent }) };
      if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body);
      outgoing = client.request(url, { method: request.method ?? 'POST', headers }, (response) => {
        if (Number(response.headers['content-length']) > MAX_ANSWER_BYTES) {
          settle(tooLarge());
          return outgoing!.destroy();
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size <= MAX_ANSWER_BYTES) return void chunks.push(chunk);
          settle(tooLarge());
          outgoing!.destroy();
        });
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after'] ?? null) : undefined;
          settle({ kind: 'answer', status, text: Buffer.concat(chunks).toString('utf8'), ...(retryAfterMs !== undefined && { retryAfterMs }) });
        });
        // The connection ended before the whole answer: a failure to read it, never half an answer.
        response.on('close', () => {
          if (!response.complete) settle({ kind: 'failed', reason: 'could not be reached: the connection closed before the whole answer' });
        });
        response.on('error', (error) => settle({ kind: 'failed', reason: `could not be reached: ${error.message}` }));
      });
      outgoing.on('error', (error) => settle({ kind: 'failed', reason: `could not be reached: ${error.message}` }));
      outgoing.end(request.body);
    } catch (error) {
      settle({ kind: 'failed', reason: `could not be reached: ${error instanceof Error ? error.message : String(error)}` });
    }
  });
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

/** A 2xx answer: the receiver took the request (a 3xx is not followed, so it is a refusal like a 4xx). */
export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
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
