/**
 * Dynamic registration is open to anyone (RFC 7591 §3 without an initial access token) and every registered
 * client is a row kept for good; RFC 7591 §5 leaves abuse to the server. So one client address may register
 * at most `ORG_REGISTRATIONS_PER_HOUR` clients an hour (default 20): a real MCP client registers once per
 * server and keeps its `client_id`, a script filling the table is stopped. Counted in the database so every
 * process shares the count (DESIGN 6); refused with 429, `Retry-After` and `too_many_requests`.
 */
import type { AuthContext } from './context.js';
import { countAttempt, type RateLimit } from '../platform/rate-limit.js';
import { TooManyRequests } from './errors.js';

export const DEFAULT_REGISTRATIONS_PER_HOUR = 20;

export function registrationLimit(ctx: AuthContext): RateLimit {
  return { limit: ctx.config.registrationsPerHour ?? DEFAULT_REGISTRATIONS_PER_HOUR, windowSeconds: 60 * 60 };
}

/** Counts one registration from `address`; throws TooManyRequests past the limit. */
export async function checkRegistrationRate(ctx: AuthContext, address: string): Promise<void> {
  const limit = registrationLimit(ctx);
  const outcome = await countAttempt(ctx.db, `register:${address}`, limit);
  if (!outcome.allowed) {
    throw new TooManyRequests(
      `too many client registrations from this address (at most ${limit.limit} an hour); try again in ${outcome.retryAfter} seconds`,
      outcome.retryAfter,
    );
  }
}
