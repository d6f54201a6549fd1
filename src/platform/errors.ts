/**
 * The shape every catalogued error takes, and the platform's own catalogue. Each service keeps its own
 * catalogue beside it (`content/errors.ts`, `auth/errors.ts`): codes with their HTTP statuses, as data, and
 * the functions that build each refusal with its message. This module knows how such an error looks and how
 * it travels as REST JSON; the README's error table documents every catalogued code (test/platform/error-catalogue.test.ts).
 */
export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

export class AppError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }

  toJSON(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) } };
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** A catalogue's codes, each with its HTTP status. */
export type ErrorCodes = Readonly<Record<string, number>>;

/** Builds errors of one catalogue: only its codes, each with the status the catalogue gives it. */
export function errorMaker<Codes extends ErrorCodes>(codes: Codes) {
  return (code: keyof Codes & string, message: string, details?: Record<string, unknown>) => new AppError(code, codes[code], message, details);
}

/** What any Atrium HTTP server or MCP tool registry may answer, whatever the service (platform/http.ts, platform/mcp/tools.ts). */
export const PLATFORM_ERROR_CODES = {
  invalid_request: 400,
  not_found: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
} as const satisfies ErrorCodes;

const platformError = errorMaker(PLATFORM_ERROR_CODES);

export const platformErrors = {
  /** A request or tool arguments the schema refuses; `details.issues` names each field. */
  invalidRequest: (message: string, details?: Record<string, unknown>) => platformError('invalid_request', message, details),
  noRoute: (method: string, path: string) => platformError('not_found', `no route for ${method} ${path}`),
  payloadTooLarge: () => platformError('payload_too_large', 'request body is too large'),
  unsupportedMediaType: (message: string) => platformError('unsupported_media_type', message),
  rateLimited: (message = 'too many requests, slow down') => platformError('rate_limited', message),
  /** Anything unexpected: logged, and hidden from the client. */
  internal: () => platformError('internal_error', 'internal server error'),
  /** The database cannot be reached (database-outage.ts): try again after `Retry-After` seconds. */
  unavailable: () => platformError('unavailable', 'the database cannot be reached right now; try again shortly'),
} as const;
