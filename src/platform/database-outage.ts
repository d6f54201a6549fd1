/**
 * Telling a database that cannot be reached from any other failure (issue 16 item 5): a refused or reset
 * connection, a server shutting down or restarting (57P01–57P03), a connection class error (08xxx), a pool
 * that cannot connect in time, or a statement the server or the client gave up on (57014, the client's query
 * timeout). Such a request answers `503 unavailable` with `Retry-After` instead of `500 internal_error`, and
 * background work logs the outage once instead of once per poll.
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '57014', '53300']);
const MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error and is not queryable',
  'Connection ended unexpectedly',
  'the database system is',
];

/** Seconds a client is asked to wait (`Retry-After`) while the database cannot be reached. */
export const RETRY_AFTER_SECONDS = 5;

export function isDatabaseUnreachable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 8; cause = (cause as { cause?: unknown }).cause, depth += 1) {
    if (typeof cause !== 'object') return false;
    const { code, message } = cause as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || SQLSTATES.has(code) || code.startsWith('08'))) return true;
    if (typeof message === 'string' && MESSAGES.some((text) => message.includes(text))) return true;
  }
  return false;
}

/**
 * Says "lost" once when a background loop starts failing for want of the database and "back" once when it
 * works again, instead of one line per failed poll.
 */
export function outageReporter(log: { warn(data: object, message: string): void; info(data: object, message: string): void }, what: string) {
  let down = false;
  return {
    failed(error: unknown): boolean {
      if (!isDatabaseUnreachable(error)) return false;
      if (!down) log.warn({ err: error }, `${what}: the database cannot be reached; retrying quietly until it is back`);
      down = true;
      return true;
    },
    succeeded(): void {
      if (down) log.info({}, `${what}: the database is back`);
      down = false;
    },
  };
}
