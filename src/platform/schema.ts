/** Tables shared by both services' plumbing: the durable job queue, MCP sessions, rate-limit counters and the ordering sequence. */
import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgSequence, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Feeds `orderedNow()`: the sub-millisecond digits that keep list timestamps unique (see time.ts). */
export const tick = pgSequence('atrium_tick');

/**
 * A small durable job queue: rows are claimed with `FOR UPDATE SKIP LOCKED` and a lease, so any number of
 * processes on one PostgreSQL database share the work and a crashed worker's job is picked up again.
 */
export const jobs = pgTable(
  'jobs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    kind: text('kind').notNull(),
    /** At most one pending job per key (for example one publish job per scheduled post). */
    key: text('key').unique(),
    payload: jsonb('payload').notNull().default(sql`'{}'::jsonb`),
    runAt: timestamp('run_at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull().default(5),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'string' }),
    failedAt: timestamp('failed_at', { withTimezone: true, mode: 'string' }),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
  },
  (table) => [index('jobs_due_idx').on(table.runAt).where(sql`failed_at IS NULL`)],
);

/**
 * MCP sessions live in the database, not in one process's memory, so a session initialized on one process
 * continues on any other (DESIGN section 6).
 */
export const mcpSessions = pgTable('mcp_sessions', {
  id: text('id').primaryKey(),
  server: text('server').notNull(),
  protocolVersion: text('protocol_version').notNull(),
  clientName: text('client_name').notNull(),
  clientVersion: text('client_version'),
  /**
   * The capabilities the client declared in `initialize` (2025 revisions), so any process can tell whether this
   * session's client takes tasks or URL-mode elicitation (issue 21); `{}` for sessions from before.
   */
  clientCapabilities: jsonb('client_capabilities').$type<Record<string, unknown>>().notNull().default({}),
  /** Who the session acts for, when the server authenticates a principal (the org server's token subject). */
  principal: text('principal'),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
  lastSeenAt: timestamp('last_seen_at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
  endedAt: timestamp('ended_at', { withTimezone: true, mode: 'string' }),
});

/**
 * Fixed-window rate-limit counters (rate-limit.ts), shared by every process (DESIGN section 6). A row whose
 * `resets_at` has passed counts as a fresh window and may be deleted by housekeeping.
 */
export const rateLimits = pgTable(
  'rate_limits',
  {
    key: text('key').primaryKey(),
    count: integer('count').notNull(),
    resetsAt: timestamp('resets_at', { withTimezone: true, mode: 'string' }).notNull(),
  },
  (table) => [index('rate_limits_resets_at_idx').on(table.resetsAt)],
);
