/**
 * MCP sessions kept in the database (DESIGN section 6), so that a session initialized on one process continues
 * on any other with no sticky routing. The SDK's own session map lives in one process's memory; we run its
 * transport stateless and keep the session here instead.
 */
import { randomBytes } from 'node:crypto';
import { and, eq, lt, or, sql } from 'drizzle-orm';
import { transact, type ChangeFeed } from '../changes.js';
import type { Db, Queryable } from '../database.js';
import { ReadCache } from '../read-cache.js';
import { mcpSessions } from '../schema.js';
import { toIso } from '../time.js';

export interface McpSession {
  id: string;
  /** Which MCP server issued it (`content`, `org`): one table serves every endpoint. */
  server: string;
  protocolVersion: string;
  /** `clientInfo.name` from `initialize`; the content server records writes under it. */
  clientName: string;
  clientVersion: string | null;
  /** `capabilities` from `initialize`: whether the client takes tasks, elicitation, … (issue 21). */
  clientCapabilities: Record<string, unknown>;
  /** Who the session acts for, when the endpoint authenticates a principal; later requests must be theirs. */
  principal: string | null;
  lastSeenAt: string;
}

export interface NewSession {
  server: string;
  protocolVersion: string;
  clientName: string;
  clientVersion?: string;
  clientCapabilities?: Record<string, unknown>;
  principal: string | null;
}

/**
 * 2025-03-26 transport spec: the id must be globally unique, cryptographically secure and visible ASCII.
 * 256 random bits, base64url.
 */
export function newSessionId(): string {
  return randomBytes(32).toString('base64url');
}

export async function createSession(db: Queryable, session: NewSession): Promise<McpSession> {
  const [row] = await db
    .insert(mcpSessions)
    .values({
      id: newSessionId(),
      server: session.server,
      protocolVersion: session.protocolVersion,
      clientName: session.clientName,
      clientVersion: session.clientVersion ?? null,
      clientCapabilities: session.clientCapabilities ?? {},
      principal: session.principal,
    })
    .returning();
  return toSession(row);
}

/** The live (not ended) session with that id on that server, if any. */
export async function findSession(db: Queryable, server: string, id: string): Promise<McpSession | undefined> {
  const [row] = await db
    .select()
    .from(mcpSessions)
    .where(and(eq(mcpSessions.id, id), eq(mcpSessions.server, server), sql`${mcpSessions.endedAt} IS NULL`))
    .limit(1);
  return row ? toSession(row) : undefined;
}

/** Ends a session (DELETE /mcp); later requests carrying its id are answered 404. */
export async function endSession(db: Queryable, server: string, id: string): Promise<void> {
  await db
    .update(mcpSessions)
    .set({ endedAt: sql`now()` })
    .where(and(eq(mcpSessions.id, id), eq(mcpSessions.server, server), sql`${mcpSessions.endedAt} IS NULL`));
}

/**
 * Records activity on a session at most once per `everyMs`, so a busy session does not turn every read into
 * a write.
 */
export async function touchSession(db: Queryable, session: McpSession, everyMs = 60_000): Promise<void> {
  if (Date.now() - Date.parse(session.lastSeenAt) < everyMs) return;
  session.lastSeenAt = new Date().toISOString();
  await db.update(mcpSessions).set({ lastSeenAt: sql`now()` }).where(eq(mcpSessions.id, session.id));
}

/**
 * Deletes the server's sessions that ended, or saw no request, more than `idleSeconds` ago (housekeeping).
 * A client presenting a deleted session's id gets 404 and initializes a new session (MCP transport spec).
 * With the endpoint's change feed, the deletion is announced in its transaction, so no process keeps serving a
 * deleted session from memory.
 */
export async function deleteStaleSessions(db: Db, server: string, idleSeconds: number, changes?: ChangeFeed): Promise<number> {
  const cutoff = sql`now() - make_interval(secs => ${idleSeconds})`;
  const remove = (on: Queryable) =>
    on
      .delete(mcpSessions)
      .where(and(eq(mcpSessions.server, server), or(lt(mcpSessions.lastSeenAt, cutoff), lt(mcpSessions.endedAt, cutoff))))
      .returning({ id: mcpSessions.id });
  if (!changes) return (await remove(db)).length;
  const deleted = await transact(db, changes, async (tx, changed) => {
    const rows = await remove(tx);
    for (const { id } of rows) changed({ kind: SESSION_CHANGE, key: id });
    return rows;
  });
  return deleted.length;
}

function toSession(row: typeof mcpSessions.$inferSelect): McpSession {
  return {
    id: row.id,
    server: row.server,
    protocolVersion: row.protocolVersion,
    clientName: row.clientName,
    clientVersion: row.clientVersion,
    clientCapabilities: row.clientCapabilities,
    principal: row.principal,
    lastSeenAt: toIso(row.lastSeenAt),
  };
}

export interface SessionStoreOptions {
  /**
   * Keep live sessions in this process's memory, kept exact across processes by this change feed: ending a
   * session announces it in the same transaction, so every process drops it when that commits, and while the
   * feed is down every lookup reads the table (platform/changes.ts). Without a feed every lookup reads the table.
   */
  changes?: ChangeFeed;
  /** Most sessions kept in memory; the least recently used goes first. Default 10,000. */
  maxCached?: number;
}

/** The change kind announced when a session ends; its key is the session id. */
export const SESSION_CHANGE = 'mcp_session';

/** The session rules' storage for one endpoint (`scope` = its server name), with the optional cache. */
export class SessionStore {
  private readonly cache: ReadCache<McpSession> | undefined;

  constructor(
    private readonly db: Db,
    private readonly scope: string,
    private readonly options: SessionStoreOptions = {},
  ) {
    if (options.changes) {
      this.cache = new ReadCache<McpSession>({ maxAgeMs: 60_000, maxEntries: options.maxCached ?? 10_000 }).follow(options.changes, {
        kinds: [SESSION_CHANGE],
        byKey: true,
      });
    }
  }

  create(session: Omit<NewSession, 'server'>): Promise<McpSession> {
    return createSession(this.db, { ...session, server: this.scope });
  }

  /** The live session with that id, touched; undefined when unknown or ended. */
  async find(id: string): Promise<McpSession | undefined> {
    const load = () => findSession(this.db, this.scope, id);
    const session = this.cache ? await this.cache.read(id, load) : await load();
    if (session) await touchSession(this.db, session);
    return session;
  }

  async end(id: string): Promise<void> {
    const changes = this.options.changes;
    if (!changes) return endSession(this.db, this.scope, id);
    await transact(this.db, changes, async (tx, changed) => {
      await endSession(tx, this.scope, id);
      changed({ kind: SESSION_CHANGE, key: id });
    });
  }
}
