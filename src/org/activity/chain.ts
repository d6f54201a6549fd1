/**
 * The activity log's hash chain: tamper evidence without making writers wait for one another.
 *
 * Writers only insert (records.ts). Sealing then takes the entries that have committed and are not yet in the
 * chain, in the order of their sequence numbers, and gives each the next `position`, the previous entry's hash as
 * `prev_hash`, and `hash` = SHA-256 over its content and `prev_hash` (as RFC 8785 canonical JSON, so jsonb's own key order
 * does not matter). One process seals at a time (a
 * transaction-level advisory lock, tried, never waited for); every process tries every second, and the activity
 * page and `atrium activity verify` seal first, so the chain trails the log by at most about a second.
 *
 * `verifyActivity` walks the chain: an edited entry no longer matches its hash, a deleted one leaves a gap in the
 * positions and a `prev_hash` that names nothing. (Deleting the newest entries together with nothing after them
 * cannot be told from their never having been written; keep copies of `npx atrium activity verify`'s head to
 * compare.)
 */
import { createHash } from 'node:crypto';
import { asc, desc, gt, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../platform/database.js';
import { queryRows } from '../../platform/database.js';
import { canonicalJson } from '../../platform/canonical-json.js';
import { orgActivity } from '../schema.js';
import type { ActivityEntry } from './records.js';

const GENESIS = '0'.repeat(64);
const BATCH = 500;

type Sealable = Omit<ActivityEntry, 'position' | 'prevHash' | 'hash'>;

export function entryHash(entry: Sealable, position: number, prevHash: string): string {
  const content = canonicalJson([
    position,
    entry.seq,
    new Date(entry.at).toISOString(),
    entry.kind,
    entry.summary,
    entry.spaceId,
    entry.personId,
    entry.clientId,
    entry.agentId,
    entry.capabilityId,
    entry.operationId,
    entry.subject,
    entry.details,
    entry.traceparent,
    prevHash,
  ]);
  return createHash('sha256').update(content).digest('hex');
}

/**
 * Seals what has committed since the last seal; returns how many entries it sealed, or `undefined` when another
 * process is sealing right now.
 */
export async function sealActivity(db: Db): Promise<number | undefined> {
  let sealed = 0;
  for (;;) {
    const count = await db.transaction(async (tx) => {
      const [lock] = await queryRows<{ locked: boolean }>(
        tx,
        sql`SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '.org_activity_chain')) AS locked`,
      );
      if (!lock.locked) return undefined;
      const [head] = await tx
        .select({ position: orgActivity.position, hash: orgActivity.hash })
        .from(orgActivity)
        .where(isNotNull(orgActivity.position))
        .orderBy(desc(orgActivity.position))
        .limit(1);
      const pending = await tx.select().from(orgActivity).where(isNull(orgActivity.hash)).orderBy(asc(orgActivity.seq)).limit(BATCH);
      if (pending.length === 0) return 0;
      let position = head?.position ?? 0;
      let prevHash = head?.hash ?? GENESIS;
      const seqs: number[] = [];
      const positions: number[] = [];
      const prevHashes: string[] = [];
      const hashes: string[] = [];
      for (const entry of pending) {
        position += 1;
        const hash = entryHash(entry, position, prevHash);
        seqs.push(entry.seq);
        positions.push(position);
        prevHashes.push(prevHash);
        hashes.push(hash);
        prevHash = hash;
      }
      await tx.execute(sql`
        UPDATE org_activity AS entry
           SET position = sealed.position, prev_hash = sealed.prev_hash, hash = sealed.hash
          FROM (SELECT unnest(${`{${seqs.join(',')}}`}::bigint[]) AS seq,
                       unnest(${`{${positions.join(',')}}`}::bigint[]) AS position,
                       unnest(${`{${prevHashes.join(',')}}`}::text[]) AS prev_hash,
                       unnest(${`{${hashes.join(',')}}`}::text[]) AS hash) AS sealed
         WHERE entry.seq = sealed.seq`);
      return pending.length;
    });
    if (count === undefined) return sealed > 0 ? sealed : undefined;
    sealed += count;
    if (count < BATCH) return sealed;
  }
}

export interface ChainProblem {
  /** The position in the chain where the problem shows. */
  position: number;
  seq?: number;
  problem: string;
}

export interface ChainReport {
  /** Entries in the chain. */
  entries: number;
  /** The last position and its hash: write it down to notice a deleted tail later. */
  head: { position: number; hash: string } | null;
  problems: ChainProblem[];
}

/** Checks every sealed entry against its hash and its predecessor, after sealing what is pending. */
export async function verifyActivity(db: Db, options: { maxProblems?: number } = {}): Promise<ChainReport> {
  const maxProblems = options.maxProblems ?? 100;
  await sealActivity(db);
  const problems: ChainProblem[] = [];
  let expected = 1;
  let prevHash = GENESIS;
  let entries = 0;
  let head: ChainReport['head'] = null;
  let after = 0;
  for (;;) {
    const rows = await db
      .select()
      .from(orgActivity)
      .where(gt(orgActivity.position, after))
      .orderBy(asc(orgActivity.position))
      .limit(2_000);
    for (const row of rows) {
      const position = row.position as number;
      if (position !== expected) {
        problems.push({
          position: expected,
          problem:
            position === expected + 1
              ? `the entry at position ${expected} is missing (deleted)`
              : `the entries at positions ${expected}–${position - 1} are missing (deleted)`,
        });
      } else if (row.prevHash !== prevHash) {
        problems.push({ position, seq: row.seq, problem: `entry ${row.seq} does not follow the entry before it (its previous hash differs)` });
      }
      if (row.hash !== entryHash(row, position, row.prevHash ?? '')) {
        problems.push({ position, seq: row.seq, problem: `entry ${row.seq} was changed after it was written (its hash does not match its content)` });
      }
      prevHash = row.hash ?? '';
      expected = position + 1;
      entries += 1;
      head = { position, hash: row.hash ?? '' };
      after = position;
      if (problems.length >= maxProblems) return { entries, head, problems };
    }
    if (rows.length < 2_000) return { entries, head, problems };
  }
}

/** Seals every second on this process until stopped; a failed round is retried on the next. */
export function startActivitySealer(db: Db, onError: (error: unknown) => void, everyMs = 1_000): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    running = running.then(async () => {
      if (stopped) return;
      const [pending] = await db.select({ seq: orgActivity.seq }).from(orgActivity).where(isNull(orgActivity.hash)).limit(1);
      if (pending) await sealActivity(db);
    }).catch(onError);
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
