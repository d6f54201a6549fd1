/**
 * The org service's error catalogue for its MCP tools: each refusal has a stable code and status, sent as
 * an `isError` tool result holding `{"error": {code, message, details}}` (the shape of DESIGN 3).
 * OAuth and bearer refusals have their own RFC shapes (src/auth/errors.ts, mcp/bearer.ts).
 */
import { AppError } from '../platform/errors.js';

export const orgErrors = {
  invalidRequest: (message: string, details?: Record<string, unknown>) => new AppError('invalid_request', 400, message, details),
  /** DESIGN 4.3: with no space to place work in, the client must stop; every tool but service_context says so. */
  noSpaces: () =>
    new AppError('no_spaces', 403, 'you belong to no space, so no work can be placed; ask an owner or admin to add you to a space'),
  internal: () => new AppError('internal_error', 500, 'internal server error'),
} as const;
