/**
 * Fixed-window counters in the database (DESIGN section 6: every process sees the same count). One
 * statement both counts the attempt and starts a new window when the old one has passed, so concurrent
 * attempts are counted exactly.
 */
import { eq, sql } from 'drizzle-orm';
import type { Queryable } from '../platform/database.js';
import { rateLimits } from './schema.js';

export interface RateLimit {
  /** Attempts allowed per window. */
  limit: number;
  windowSeconds: number;
}

export interface RateLimitOutcome {
  allowed: boolean;
  /** Seconds until the window resets (for `Retry-After`). */
  retryAfter: number;
}

export async function countAttempt(db: Queryable, key: string, { limit, windowSeconds }: RateLimit): Promise<RateLimitOutcome> {
  const window = sql`make_interval(secs => ${windowSeconds})`;
  const expired = sql`${rateLimits.windowStart} <= now() - ${window}`;
  const [row] = await db
    .insert(rateLimits)
    .values({ key, windowStart: sql`now()`, count: 1 })
    .onConflictDoUpdate({
      target: rateLimits.key,
      set: {
        count: sql`CASE WHEN ${expired} THEN 1 ELSE ${rateLimits.count} + 1 END`,
        windowStart: sql`CASE WHEN ${expired} THEN now() ELSE ${rateLimits.windowStart} END`,
      },
    })
    .returning({
      count: rateLimits.count,
      retryAfter: sql<number>`ceil(extract(epoch FROM ${rateLimits.windowStart} + ${window} - now()))::int`,
    });
  return { allowed: row.count <= limit, retryAfter: Math.max(1, row.retryAfter) };
}

export async function resetAttempts(db: Queryable, key: string): Promise<void> {
  await db.delete(rateLimits).where(eq(rateLimits.key, key));
}
