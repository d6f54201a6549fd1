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
  /** When refused: whole seconds, at least 1, until an attempt is allowed again (RFC 9110 §10.2.3 `Retry-After`). */
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

/** Gives one counted attempt back (a successful sign-in is not held against its address). */
export async function forgiveAttempt(db: Queryable, key: string): Promise<void> {
  await db
    .update(rateLimits)
    .set({ count: sql`greatest(${rateLimits.count} - 1, 0)` })
    .where(eq(rateLimits.key, key));
}

/**
 * Exponential backoff: the first `free` attempts go through at once; after them each attempt must wait
 * `baseSeconds`, doubling per attempt up to `maxSeconds`, since the one before. The count is forgotten after
 * `memorySeconds` without attempts (or on `resetAttempts`). Unlike a fixed window this never refuses for
 * longer than `maxSeconds`, so someone else's failures can delay a person but not lock them out.
 */
export interface Backoff {
  free: number;
  baseSeconds: number;
  maxSeconds: number;
  memorySeconds: number;
}

/**
 * Claims one attempt under `key` if its backoff has passed. The check and the count are one conditional
 * upsert, so of many concurrent attempts only as many pass as the backoff allows.
 */
export async function claimAttempt(db: Queryable, key: string, backoff: Backoff): Promise<RateLimitOutcome> {
  const { free, baseSeconds, maxSeconds, memorySeconds } = backoff;
  const forgotten = sql`${rateLimits.resetsAt} <= now()`;
  const lastAttempt = sql`${rateLimits.resetsAt} - make_interval(secs => ${memorySeconds})`;
  const wait = sql`CASE WHEN ${rateLimits.count} < ${free} THEN 0
    ELSE least(${maxSeconds}::float8, ${baseSeconds}::float8 * power(2::float8, ${rateLimits.count} - ${free})) END`;
  const nextAllowed = sql`${lastAttempt} + make_interval(secs => ${wait})`;
  const nextReset = sql`now() + make_interval(secs => ${memorySeconds})`;
  const claimed = await db
    .insert(rateLimits)
    .values({ key, count: 1, resetsAt: nextReset })
    .onConflictDoUpdate({
      target: rateLimits.key,
      set: { count: sql`CASE WHEN ${forgotten} THEN 1 ELSE ${rateLimits.count} + 1 END`, resetsAt: nextReset },
      setWhere: sql`${forgotten} OR ${nextAllowed} <= now()`,
    })
    .returning({ key: rateLimits.key });
  if (claimed.length > 0) return { allowed: true, retryAfter: 0 };
  const [row] = await db
    .select({ retryAfter: sql<number>`ceil(extract(epoch FROM ${nextAllowed} - now()))::int` })
    .from(rateLimits)
    .where(eq(rateLimits.key, key));
  return { allowed: false, retryAfter: Math.max(1, row?.retryAfter ?? 1) };
}
