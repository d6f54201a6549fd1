/**
 * The content service's error catalogue (DESIGN section 3): every refusal the REST API and the content
 * MCP server can give, with its stable code and HTTP status. REST sends `error.toJSON()` with the status;
 * MCP sends the same JSON as an `isError` tool result.
 */
import { AppError } from '../platform/errors.js';

export const contentErrors = {
  invalidRequest: (message: string, details?: Record<string, unknown>) =>
    new AppError('invalid_request', 400, message, details),
  unauthorized: () => new AppError('unauthorized', 401, 'missing or invalid bearer token'),
  notFound: (what: string, id: string) => new AppError('not_found', 404, `${what} '${id}' not found`),
  /** A workflow move or delete the state machine refuses; the message names the current status. */
  invalidState: (message: string, status: string) => new AppError('invalid_state', 409, message, { status }),
  conflict: (message: string, field: string) => new AppError('conflict', 409, message, { field }),
  payloadTooLarge: (message: string) => new AppError('payload_too_large', 413, message),
  unsupportedMediaType: (message: string) => new AppError('unsupported_media_type', 415, message),
  /** Submit validation: `details.fields` lists every failing field with its reason. */
  validationFailed: (fields: Array<{ field: string; message: string }>) =>
    new AppError('validation_failed', 422, `cannot submit: ${fields.map((f) => f.field).join(', ')} failed validation`, {
      fields,
    }),
  rateLimited: (message = 'too many requests, slow down') => new AppError('rate_limited', 429, message),
} as const;
