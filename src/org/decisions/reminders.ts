/**
 * DESIGN 4.8: a decision still open half-way to its expiry reminds the people asked to decide and tells the owners
 * and admins, once. The reminder is a due job queued with the decision; when it runs, one conditional UPDATE of
 * `reminded_at` decides whether there is anything to say, so a decision resolved in time (or a job run twice)
 * announces nothing.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { jobKind } from '../../platform/jobs.js';
import { toIso } from '../../platform/time.js';
import { recordActivity } from '../activity/records.js';
import type { OrgContext } from '../context.js';
import { announce } from '../events/announce.js';
import { findOperation } from '../operations/operations.js';
import { aboutOperation } from '../operations/states.js';
import { decisions } from '../schema.js';

const remindDecision = jobKind<{ decision_id: string }>('org.decision-reminder');

/** Queues the decision's reminder, due half-way from its request to its expiry. */
export async function scheduleReminder(db: Queryable, decision: { id: string; requestedAt: string; expiresAt: string }): Promise<void> {
  const requested = Date.parse(toIso(decision.requestedAt));
  const halfWay = new Date(requested + (Date.parse(toIso(decision.expiresAt)) - requested) / 2);
  await remindDecision.enqueue(db, { decision_id: decision.id }, { runAt: halfWay, key: `decision-reminder:${decision.id}` });
}

export function reminderJobHandlers(ctx: OrgContext) {
  return remindDecision.handle(async ({ decision_id: id }) => {
    await ctx.db.transaction(async (tx) => {
      const [reminded] = await tx
        .update(decisions)
        .set({ remindedAt: sql`now()` })
        .where(and(eq(decisions.id, id), eq(decisions.status, 'pending'), sql`${decisions.expiresAt} > now()`, isNull(decisions.remindedAt)))
        .returning({ operationId: decisions.operationId, expiresAt: decisions.expiresAt });
      if (!reminded) return;
      const operation = await findOperation(tx, reminded.operationId);
      await recordActivity(tx, {
        ...(operation ? aboutOperation(operation) : { operationId: reminded.operationId }),
        kind: 'decision.reminded',
        summary: 'the decision has waited half its time: its people are reminded and the owners and admins told',
        subject: id,
        details: { expires_at: toIso(reminded.expiresAt) },
      });
      await announce(tx, 'decision.reminder', { decision_id: id });
    });
  });
}
