/**
 * How a caller waiting on an operation (`wait_seconds`) learns that it moved, on whichever process it moved:
 * every change of an operation sends `pg_notify` on this schema's operations channel inside its own
 * transaction (delivered on commit, never on rollback), and each process LISTENs on one connection of its
 * own (PGlite's in-process listener on the embedded database). A notification only wakes waiters, who then
 * read the row; a short poll covers a listener that is down or a notification missed. A notification that
 * work was queued also wakes the process's job worker, so the first free process starts it at once.
 */
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Listening, Queryable } from '../../platform/database.js';

/** A waiter re-reads the operation at least this often, whatever it hears. */
const POLL_MS = 500;
const RELISTEN_MS = 1_000;
const QUEUED = 'queued';

export interface OperationWatchOptions {
  log: FastifyBaseLogger;
  /** Called when any process queued work for an operation (after its commit). */
  queued(): void;
}

export class OperationWatch {
  readonly channel: string;
  private readonly waiters = new Map<string, Set<() => void>>();
  private listening: Listening | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly database: Database,
    private readonly options: OperationWatchOptions,
  ) {
    this.channel = `atrium_operations_${database.schema}`.slice(0, 63);
  }

  static async open(database: Database, options: OperationWatchOptions): Promise<OperationWatch> {
    const watch = new OperationWatch(database, options);
    await watch.listen();
    return watch;
  }

  /** Queues the wake-up in the caller's transaction: sent on commit. `queued`: a job for it was enqueued. */
  async changed(db: Queryable, operationId: string, options: { queued?: boolean } = {}): Promise<void> {
    await db.execute(sql`SELECT pg_notify(${this.channel}, ${options.queued ? `${operationId} ${QUEUED}` : operationId})`);
  }

  /**
   * Resolves at the next change of the operation, or after `ms` (capped at the poll interval). Register before
   * reading the row, so a change between the read and the wait is not missed.
   */
  next(operationId: string, ms: number): { promise: Promise<void>; cancel(): void } {
    let wake!: () => void;
    const promise = new Promise<void>((resolve) => (wake = resolve));
    const timer = setTimeout(() => wake(), Math.max(0, Math.min(ms, POLL_MS)));
    const waiters = this.waiters.get(operationId) ?? new Set();
    this.waiters.set(operationId, waiters);
    waiters.add(wake);
    const cancel = () => {
      clearTimeout(timer);
      waiters.delete(wake);
      if (waiters.size === 0 && this.waiters.get(operationId) === waiters) this.waiters.delete(operationId);
    };
    void promise.then(cancel);
    return { promise, cancel };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.listening?.close();
    for (const waiters of this.waiters.values()) for (const wake of waiters) wake();
  }

  private async listen(): Promise<void> {
    try {
      const listening = await this.database.listen(this.channel, {
        notify: (payload) => {
          const [operationId, event] = payload.split(' ');
          this.waiters.get(operationId)?.forEach((wake) => wake());
          if (event === QUEUED) this.options.queued();
        },
        lost: (error) => {
          this.listening = undefined;
          this.options.log.warn({ err: error }, 'operation watch: listener lost; waiters poll until it is back');
          this.relisten();
        },
      });
      if (this.closed) return void (await listening.close());
      this.listening = listening;
    } catch (error) {
      this.options.log.warn({ err: error }, 'operation watch: cannot listen; waiters poll');
      this.relisten();
    }
  }

  private relisten(): void {
    if (this.closed) return;
    this.retry = setTimeout(() => void this.listen(), RELISTEN_MS);
    this.retry.unref();
  }
}
