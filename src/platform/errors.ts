/**
 * The shape every catalogued error takes. Each service keeps its own catalogue (`content/errors.ts`,
 * `auth/errors.ts`) of codes, statuses and messages; this module only knows how such an error looks
 * and how it travels as REST JSON.
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
