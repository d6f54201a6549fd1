/**
 * Fixed-window rate limits whose counters live in the database (DESIGN section 6), so every process behind a
 * load balancer sees the same count. One statement both counts the attempt and starts a new window when the
 * old one has passed, so concurrent attempts are counted exactly. Callers name their keys by purpose
 * (`signin:<email>|<ip>`, `register:<ip>`); a key is one counter whatever the limit it is checked against.
 */
import { eq, lte, sql } from 'drizzle-orm';
import type { Queryable } from './database.js';
import { rateLimits } from './schema.js';

export interface RateLimit {
  /** Attempts allowed per window. */
  limit: number;
  windowSeconds: number;
}

export interface RateLimitOutcome {
  allowed: boolean;
  /** Whole seconds, at least 1, until the window resets (RFC 9110 §10.2.3 `Retry-After`). */
  retryAfter: number;
}

/** Counts one attempt under `key` and says whether it is within the limit. Refused attempts count too. */
export async function countAttempt(db: Queryable, key: string, { limit, windowSeconds }: RateLimit): Promise<RateLimitOutcome> {
  const nextReset = sql`now() + make_interval(secs => ${windowSeconds})`;
  const passed = sql`${rateLimits.resetsAt} <= now()`;
  const [row] = await db
    .insert(rateLimits)
    .values({ key, count: 1, resetsAt: nextReset })
    .onConflictDoUpdate({
      target: rateLimits.key,
      set: {
        count: sql`CASE WHEN ${passed} THEN 1 ELSE ${rateLimits.count} + 1 END`,
        resetsAt: sql`CASE WHEN ${passed} THEN ${nextReset} ELSE ${rateLimits.resetsAt} END`,
      },
    })
    .returning({
      count: rateLimits.count,
      retryAfter: sql<number>`ceil(extract(epoch FROM ${rateLimits.resetsAt} - now()))::int`,
    });
  return { allowed: row.count <= limit, retryAfter: Math.max(1, row.retryAfter) };
}

/** Forgets a key's count (a successful sign-in clears its failed attempts). */
export async function resetAttempts(db: Queryable, key: string): Promise<void> {
  await db.delete(rateLimits).where(eq(rateLimits.key, key));
}

/** Deletes the counters whose window has passed (housekeeping); returns how many. */
export async function deletePassedWindows(db: Queryable): Promise<number> {
  const deleted = await db.delete(rateLimits).where(lte(rateLimits.resetsAt, sql`now()`)).returning({ key: rateLimits.key });
  return deleted.length;
}
