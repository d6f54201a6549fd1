/**
 * How a caller waiting on an operation (`wait_seconds`) learns that it was answered, on whichever process it
 * moved, and how every process's job worker learns that work was queued. The database sends both on this
 * schema's operations channel from triggers (drizzle/0001_change_notifications.sql), on commit only: each
 * status change of an operation as `<id> <status>`, and each due, unclaimed job as `*`. Each process LISTENs
 * on one connection of its own (PGlite's in-process listener on the embedded database). A notification only
 * wakes waiters, who then read the row; a short poll covers a listener that is down or a notification missed.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Listening } from '../../platform/database.js';
import { isAnswered, OPERATION_STATUSES, type OperationRow, type OperationStatus } from './states.js';

/** A waiter re-reads the operation at least this often, whatever it hears. */
const POLL_MS = 500;
const RELISTEN_MS = 1_000;
/** The payload of a queued job (drizzle/0001_change_notifications.sql). */
const JOB_QUEUED = '*';

export interface OperationWatchOptions {
  log: FastifyBaseLogger;
  /** Called when any process queued a due job (after its commit). */
  queued(): void;
}

interface Waiter {
  wake(row?: OperationRow): void;
  hearsNotifications: boolean;
}

export class OperationWatch {
  readonly channel: string;
  private readonly waiters = new Map<string, Set<Waiter>>();
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

  /**
   * Resolves when the operation is next answered (settled or paused), or after `ms` (capped at the poll
   * interval when it hears notifications). Register before reading the row, so an answer between the read and the wait is not missed.
   * Resolves with the answered row when this process made the answer (`answeredHere`), else with nothing.
   * `from: 'here'`: only this process's answer wakes it, not the database's notification — for a caller whose
   * run is under way here and will hand over the row it commits, so the notification racing it costs no read.
   */
  next(operationId: string, ms: number, { from = 'anywhere' }: { from?: 'here' | 'anywhere' } = {}): { promise: Promise<OperationRow | undefined>; cancel(): void } {
    let wake!: (row?: OperationRow) => void;
    const promise = new Promise<OperationRow | undefined>((resolve) => (wake = resolve));
    const hearsNotifications = from === 'anywhere';
    // The poll covers a missed notification; a waiter on this process's run hears that run, so it waits it out.
    const timer = setTimeout(() => wake(), Math.max(0, hearsNotifications ? Math.min(ms, POLL_MS) : ms));
    const waiters = this.waiters.get(operationId) ?? new Set();
    this.waiters.set(operationId, waiters);
    const waiter = { wake, hearsNotifications };
    waiters.add(waiter);
    const cancel = () => {
      clearTimeout(timer);
      waiters.delete(waiter);
      if (waiters.size === 0 && this.waiters.get(operationId) === waiters) this.waiters.delete(operationId);
    };
    void promise.then(cancel);
    return { promise, cancel };
  }

  /** This process committed `row`'s change: when it answers the operation, its waiters here get the row as it is. */
  answeredHere(row: OperationRow): void {
    if (isAnswered(row.status)) this.waiters.get(row.id)?.forEach((waiter) => waiter.wake(row));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.listening?.close();
    for (const waiters of this.waiters.values()) for (const waiter of waiters) waiter.wake();
  }

  private async listen(): Promise<void> {
    try {
      const listening = await this.database.listen(this.channel, {
        notify: (payload) => {
          if (payload === JOB_QUEUED) return this.options.queued();
          const [operationId, status] = payload.split(' ');
          if (answers(status)) this.waiters.get(operationId)?.forEach((waiter) => waiter.hearsNotifications && waiter.wake());
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

function answers(status: string | undefined): boolean {
  return OPERATION_STATUSES.includes(status as OperationStatus) && isAnswered(status as OperationStatus);
}
