/**
 * Idempotency keys (spec 4.2 rule 4, DESIGN 4.3): the only place they are handled.
 *
 * A write tool's call with a key runs in one transaction that first claims the key — a row holding the hash
 * of the tool and its canonical arguments — and at the end stores what the call produced (its result, or the
 * operation it started). So:
 * - the same key and arguments again return what was stored: never a second effect;
 * - two such calls racing: the second's claim waits on the first's uncommitted row (a unique index), then
 *   reads what the first stored; if the first was refused and rolled back, the second runs for itself;
 * - the same key with other arguments is `idempotency_conflict`;
 * - a refused call rolls back its claim with everything else, so a refusal writes nothing.
 * Keys are per person and client, kept 24 hours (a claim over an older row takes it over; housekeeping
 * deletes the rest).
 */
import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { canonicalJson } from '../../platform/canonical-json.js';
import type { Db, Queryable, Tx } from '../../platform/database.js';
import { orgErrors } from '../errors.js';
import { idempotencyKeys } from '../schema.js';

export const IDEMPOTENCY_KEY_HOURS = 24;

export interface KeyedCall {
  personId: string;
  clientId: string;
  /** Absent: the call is simply run in a transaction. */
  key?: string;
  tool: string;
  /** The arguments that define the request (without the key itself or how long to wait). */
  args: unknown;
}

/** What a write produced: a result, or the operation it started. */
export type Produced = { result: unknown } | { operationId: string };

export async function withIdempotencyKey(db: Db, call: KeyedCall, work: (tx: Tx) => Promise<Produced>): Promise<Produced> {
  const { key } = call;
  if (key === undefined) return db.transaction(work);
  const argumentsHash = createHash('sha256').update(`${call.tool}\n${canonicalJson(call.args)}`).digest('hex');
  const where = and(eq(idempotencyKeys.personId, call.personId), eq(idempotencyKeys.clientId, call.clientId), eq(idempotencyKeys.key, key));
  return db.transaction(async (tx) => {
    const claimed = await tx
      .insert(idempotencyKeys)
      .values({ personId: call.personId, clientId: call.clientId, key, argumentsHash })
      .onConflictDoUpdate({
        target: [idempotencyKeys.personId, idempotencyKeys.clientId, idempotencyKeys.key],
        set: { argumentsHash, result: null, operationId: null, createdAt: sql`now()` },
        setWhere: sql`${idempotencyKeys.createdAt} < now() - make_interval(hours => ${IDEMPOTENCY_KEY_HOURS})`,
      })
      .returning({ key: idempotencyKeys.key });
    if (claimed.length === 0) {
      const [stored] = await tx.select().from(idempotencyKeys).where(where);
      if (stored.argumentsHash !== argumentsHash) throw orgErrors.idempotencyConflict();
      return stored.operationId !== null ? { operationId: stored.operationId } : { result: stored.result };
    }
    const produced = await work(tx);
    await tx
      .update(idempotencyKeys)
      .set('operationId' in produced ? { operationId: produced.operationId } : { result: produced.result ?? null })
      .where(where);
    return produced;
  });
}

/** Housekeeping: keys past their 24 hours. */
export async function deleteExpiredIdempotencyKeys(db: Queryable): Promise<number> {
  const deleted = await db
    .delete(idempotencyKeys)
    .where(sql`${idempotencyKeys.createdAt} < now() - make_interval(hours => ${IDEMPOTENCY_KEY_HOURS})`)
    .returning({ key: idempotencyKeys.key });
  return deleted.length;
}
