/**
 * The change feed: how a service says "this changed" so that every process sharing its database learns of it
 * exactly when the change commits, and how read caches hear it.
 *
 * A write announces its changes with `pg_notify` inside its own transaction. PostgreSQL delivers a
 * notification only when that transaction commits, and never for one that rolls back (SQL NOTIFY: "if a NOTIFY
 * is executed inside a transaction, the notify events are not delivered until and unless the transaction is
 * committed"), and a listener that hears it takes its next snapshot after the commit. Each process keeps one
 * dedicated LISTEN connection; on the embedded database PGlite's in-process `listen` plays that part, so both
 * engines run this one code path.
 *
 * The writing process does not wait for its own notification to come back: `transact` hands the changes to
 * this process's subscribers right after the commit, before the write's response is sent, so a client always
 * reads its own writes; the echo is then skipped by its origin id. Another process hears it a moment later; one
 * that must not serve a request from memory before hearing what committed before it waits for `caughtUp()`.
 *
 * While the LISTEN connection is down nobody would hear a change, so the feed is not `live`: subscribers are
 * told to `reset` (drop everything) when the connection is lost and again once it is back (changes made in
 * between were missed), and caches serve nothing until then. Reconnection backs off from 100 ms to 5 s.
 */
import { createHash, randomUUID } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Db, Listening, Queryable, Tx } from './database.js';

/** What changed: a kind of record (`blog`, `mcp_session`, …) and, when known, which one. */
export interface Change {
  kind: string;
  key?: string;
}

export type ChangeEvent = { type: 'changed'; changes: readonly Change[] } | { type: 'reset' };
export type ChangeSubscriber = (event: ChangeEvent) => void;

export interface ChangeFeedOptions {
  log: FastifyBaseLogger;
  /** First reconnection delay in ms, doubled on each failure up to `maxRetryMs`. Default 100. */
  minRetryMs?: number;
  /** Default 5000. */
  maxRetryMs?: number;
}

/** PostgreSQL refuses notification payloads of 8000 bytes or more; past this, keys are left out. */
const MAX_PAYLOAD = 7_500;

export class ChangeFeed {
  /** One channel per service schema: services and test schemas sharing a database do not hear each other. */
  readonly channel: string;
  /** Tells this process's own notifications apart when they come back. */
  private readonly origin = randomUUID();
  private readonly subscribers = new Set<ChangeSubscriber>();
  private readonly log: FastifyBaseLogger;
  private readonly minRetryMs: number;
  private readonly maxRetryMs: number;
  private retryMs: number;
  private listening: Listening | undefined;
  /** Numbers connection attempts, so a late "lost" from an older connection is ignored. */
  private attempts = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private isLive = false;

  private constructor(
    private readonly database: Database,
    options: ChangeFeedOptions,
  ) {
    this.channel = channelOf(database.schema);
    this.log = options.log;
    this.minRetryMs = options.minRetryMs ?? 100;
    this.maxRetryMs = options.maxRetryMs ?? 5_000;
    this.retryMs = this.minRetryMs;
  }

  /** Opens the LISTEN connection; if that fails the feed starts not live and keeps retrying. */
  static async open(database: Database, options: ChangeFeedOptions): Promise<ChangeFeed> {
    const feed = new ChangeFeed(database, options);
    await feed.connect();
    return feed;
  }

  /** True while notifications are heard: only then may a cache serve or store anything. */
  get live(): boolean {
    return this.isLive;
  }

  subscribe(subscriber: ChangeSubscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  /**
   * Resolves once this process has heard every change committed before the call, on every engine: call it before
   * serving a request from what a change would have dropped, where a change made by another process must be seen
   * at once (a revoked token, an ended session). It costs a round trip on the LISTEN connection, shared by all who
   * ask at the same time (database.ts). When the feed is not live it resolves at once: caches serve nothing then.
   */
  async caughtUp(): Promise<void> {
    const listening = this.listening;
    if (!listening || !this.isLive) return;
    // A failed round trip reports the connection lost, which drops every cache (`lost`): nothing stale is served.
    await listening.caughtUp().catch(() => {});
  }

  /** Queues the notification in the caller's transaction: sent to every process on commit, never on rollback. */
  async announce(tx: Queryable, changes: readonly Change[]): Promise<void> {
    await notify(tx, this.channel, this.origin, changes);
  }

  /**
   * The `pg_notify(…)` call that announces `changes`, for a write that is a single statement run on its own
   * (its own transaction): placed in that statement, it notifies on commit as `announce` does, without the
   * extra round trip while the statement's row locks are held. Call `deliver` once the statement has run.
   */
  notification(changes: readonly Change[]): SQL {
    return notifyCall(this.channel, this.origin, changes);
  }

  /** Tells this process's subscribers now; call it once the transaction that announced the changes committed. */
  deliver(changes: readonly Change[]): void {
    this.emit({ type: 'changed', changes });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.isLive = false;
    clearTimeout(this.retryTimer);
    const listening = this.listening;
    this.listening = undefined;
    await listening?.close();
  }

  private async connect(): Promise<void> {
    const attempt = ++this.attempts;
    try {
      const listening = await this.database.listen(this.channel, {
        notify: (payload) => this.received(payload),
        lost: (error) => this.lost(attempt, error),
      });
      if (this.closed) return void (await listening.close());
      this.listening = listening;
      this.retryMs = this.minRetryMs;
      // Whatever changed while nobody listened was missed: everything cached before now is suspect.
      this.emit({ type: 'reset' });
      this.isLive = true;
    } catch (error) {
      this.log.warn({ err: error, retryMs: this.retryMs }, 'change feed: cannot listen; caches bypassed until it can');
      this.scheduleReconnect();
    }
  }

  private lost(attempt: number, error: Error): void {
    if (this.closed || attempt !== this.attempts) return;
    this.listening = undefined;
    this.isLive = false;
    this.emit({ type: 'reset' });
    this.log.warn({ err: error }, 'change feed: listener connection lost; caches bypassed until it is back');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.maxRetryMs);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }

  private received(payload: string): void {
    const message = decode(payload);
    if (!message) {
      // Not ours to read: be safe and treat it as "anything may have changed".
      this.log.warn({ payload: payload.slice(0, 200) }, 'change feed: unreadable notification');
      return this.emit({ type: 'reset' });
    }
    if (message.origin === this.origin) return; // already delivered by `transact` right after its commit
    this.emit({ type: 'changed', changes: message.changes });
  }

  private emit(event: ChangeEvent): void {
    for (const subscriber of this.subscribers) {
      try {
        subscriber(event);
      } catch (error) {
        this.log.error({ err: error }, 'change feed subscriber failed');
      }
    }
  }
}

/**
 * `db.transaction(work)` that announces what `work` reports through `changed`: the notification goes out in
 * the transaction (so only on commit), and this process's subscribers hear it as soon as the commit is done.
 */
export async function transact<T>(
  db: Db,
  feed: ChangeFeed,
  work: (tx: Tx, changed: (change: Change) => void) => Promise<T>,
): Promise<T> {
  const changes: Change[] = [];
  const result = await db.transaction(async (tx) => {
    const value = await work(tx, (change) => void changes.push(change));
    if (changes.length > 0) await feed.announce(tx, changes);
    return value;
  });
  if (changes.length > 0) feed.deliver(changes);
  return result;
}

/**
 * Announces `changes` in `tx` for a writer that runs no feed of its own (a command-line process, the start-up
 * before the feed opens): every process following `schema`'s feed hears it on commit, this one included.
 */
export async function announceWithoutFeed(tx: Queryable, schema: string, changes: readonly Change[]): Promise<void> {
  await notify(tx, channelOf(schema), randomUUID(), changes);
}

async function notify(tx: Queryable, channel: string, origin: string, changes: readonly Change[]): Promise<void> {
  await tx.execute(sql`SELECT ${notifyCall(channel, origin, changes)}`);
}

function notifyCall(channel: string, origin: string, changes: readonly Change[]): SQL {
  return sql`pg_notify(${channel}, ${encode(origin, changes)})`;
}

/** An unquoted identifier (PGlite's `listen` does not quote) of at most 63 bytes. */
function channelOf(schema: string): string {
  const channel = `atrium_changes_${schema}`;
  return channel.length <= 63 ? channel : `atrium_changes_${createHash('sha256').update(schema).digest('hex').slice(0, 40)}`;
}

interface Message {
  origin: string;
  changes: Change[];
}

function encode(origin: string, changes: readonly Change[]): string {
  const payload = JSON.stringify({ origin, changes });
  if (payload.length <= MAX_PAYLOAD) return payload;
  // A large batch (a bulk update) is announced by kind: listeners drop whole kinds anyway.
  const kinds = [...new Set(changes.map((change) => change.kind))].map((kind) => ({ kind }));
  return JSON.stringify({ origin, changes: kinds });
}

function decode(payload: string): Message | undefined {
  try {
    const message = JSON.parse(payload) as Partial<Message>;
    if (typeof message.origin !== 'string' || !Array.isArray(message.changes)) return undefined;
    const valid = message.changes.every((change) => typeof change?.kind === 'string' && (change.key === undefined || typeof change.key === 'string'));
    return valid ? (message as Message) : undefined;
  } catch {
    return undefined;
  }
}
