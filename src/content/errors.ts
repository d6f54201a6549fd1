/**
 * The content service's error catalogue (DESIGN section 3): every refusal the REST API and the content
 * MCP server can give, with its stable code and HTTP status. REST sends `error.toJSON()` with the status;
 * MCP sends the same JSON as an `isError` tool result. What the HTTP server itself refuses (an unknown
 * route, a body over the limit) is the platform's catalogue (platform/errors.ts).
 */
import { errorMaker, type ErrorCodes } from '../platform/errors.js';

export const CONTENT_ERROR_CODES = {
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  invalid_state: 409,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
} as const satisfies ErrorCodes;

const contentError = errorMaker(CONTENT_ERROR_CODES);

const SEND_THE_SECRET =
  'send the content API secret as the bearer token, `Authorization: Bearer <secret>` (CONTENT_API_SECRET, or when the service generated it, the file secrets/content-api-secret in its data directory)';

export const contentErrors = {
  invalidRequest: (message: string, details?: Record<string, unknown>) => contentError('invalid_request', message, details),
  /** Says what to send, for people and for MCP clients that would otherwise go looking for OAuth (there is none). */
  unauthorized: () => contentError('unauthorized', `missing or invalid bearer token: ${SEND_THE_SECRET}`),
  /** An OAuth discovery or registration path asked of the content service: it takes the secret, not OAuth. */
  noOAuth: (method: string, path: string) => contentError('not_found', `no route for ${method} ${path}: the content service takes no OAuth; ${SEND_THE_SECRET}`),
  notFound: (what: string, id: string) => contentError('not_found', `${what} '${id}' not found`),
  /** A workflow move or delete the state machine refuses; the message names the current status. */
  invalidState: (message: string, status: string) => contentError('invalid_state', message, { status }),
  conflict: (message: string, field: string) => contentError('conflict', message, { field }),
  payloadTooLarge: (message: string) => contentError('payload_too_large', message),
  unsupportedMediaType: (message: string) => contentError('unsupported_media_type', message),
  /** Submit validation: `details.fields` lists every failing field with its reason. */
  validationFailed: (fields: Array<{ field: string; message: string }>) =>
    contentError('validation_failed', `cannot submit: ${fields.map((f) => f.field).join(', ')} failed validation`, { fields }),
} as const;
