/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` a client sends is kept for the
 * work it causes, so one trace joins a tool call, the verdict, the decision and the webhook sent for it.
 *
 * The current trace lives in AsyncLocalStorage, as OpenTelemetry's context does: entered where a request is
 * handled (an MCP call's `_meta.traceparent` or the HTTP header) and where stored work resumes (an operation
 * run by the job queue), and read where something is recorded or sent. This process is one hop of the trace:
 * what it sends carries the same trace id with a parent id of its own.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

// version "00": trace id (32 hex, not all zero), parent id (16 hex, not all zero), flags (2 hex).
const TRACEPARENT = /^00-(?!0{32})([0-9a-f]{32})-(?!0{16})([0-9a-f]{16})-([0-9a-f]{2})$/;

const storage = new AsyncLocalStorage<string>();

/** The value when it is a valid version-00 `traceparent`; anything else (absent, malformed, too long) is ignored. */
export function parseTraceparent(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 55) return undefined;
  const normalized = value.trim().toLowerCase();
  return TRACEPARENT.test(normalized) ? normalized : undefined;
}

/** Runs `work` with `traceparent` as the current trace (or with none, when it is missing). */
export function withTraceparent<T>(traceparent: string | null | undefined, work: () => T): T {
  return traceparent ? storage.run(traceparent, work) : work();
}

/** The trace the current work belongs to, as it arrived. */
export function currentTraceparent(): string | undefined {
  return storage.getStore();
}

/** The `traceparent` for a call made now on the current trace's behalf: its trace id and flags, a new parent id. */
export function outgoingTraceparent(): string | undefined {
  const match = TRACEPARENT.exec(storage.getStore() ?? '');
  if (!match) return undefined;
  return `00-${match[1]}-${randomBytes(8).toString('hex')}-${match[3]}`;
}
