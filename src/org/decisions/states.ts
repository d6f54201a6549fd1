/**
 * DESIGN 4.4: a decision is `pending → approved | denied | expired`. The table is the whole state machine:
 * `moveDecision` applies it with one conditional UPDATE, so of several concurrent resolutions exactly one wins
 * and the others get `invalid_state`; a person resolves only before the expiry, the expiry job only after it.
 *
 * DESIGN 4.8's two-person rule adds `count_approval`: an approval short of the number the decision needs keeps it
 * pending. Every approval passes through it first; its UPDATE locks the decision's row until the approval's
 * transaction ends, so the approvals of one decision are counted one at a time and the count each one reads
 * includes every approval before it.
 */
import { eq, sql } from 'drizzle-orm';
import { stateTable, type Transition } from '../../platform/state-table.js';
import type { Queryable } from '../../platform/database.js';
import { orgErrors } from '../errors.js';
import { decisions } from '../schema.js';

export const DECISION_STATUSES = ['pending', 'approved', 'denied', 'expired'] as const;
export type DecisionStatus = (typeof DECISION_STATUSES)[number];

interface DecisionTransition extends Transition<DecisionStatus> {
  /** A person resolves before the decision's expiry; the expiry job only after it. */
  readonly when: 'before_expiry' | 'after_expiry';
}

export const DECISION_TRANSITIONS = {
  count_approval: { from: ['pending'], to: 'pending', when: 'before_expiry' },
  approve: { from: ['pending'], to: 'approved', when: 'before_expiry' },
  deny: { from: ['pending'], to: 'denied', when: 'before_expiry' },
  expire: { from: ['pending'], to: 'expired', when: 'after_expiry' },
} as const satisfies Record<string, DecisionTransition>;

export type DecisionRow = typeof decisions.$inferSelect;

export async function findDecision(db: Queryable, id: string): Promise<DecisionRow | undefined> {
  const [row] = await db.select().from(decisions).where(eq(decisions.id, id));
  return row;
}

/**
 * Applies `event` with one conditional UPDATE, or throws `invalid_state` naming the decision's status; a pending
 * decision past its expiry is named expired.
 */
export const { move: moveDecision } = stateTable({
  table: decisions,
  transitions: DECISION_TRANSITIONS,
  stamp: (transition) => (transition.to === 'pending' ? {} : { resolvedAt: sql`now()` }),
  guard: (event) => {
    const transition: DecisionTransition = DECISION_TRANSITIONS[event];
    return transition.when === 'before_expiry' ? sql`${decisions.expiresAt} > now()` : sql`${decisions.expiresAt} <= now()`;
  },
  explain: { past: sql<boolean>`${decisions.expiresAt} <= now()` },
  refusal: (current, event) => {
    const status = current.status === 'pending' && current.past ? 'expired' : current.status;
    if (status === 'pending') return orgErrors.invalidState(`the decision is not yet due to ${event}`, { status });
    return orgErrors.invalidState(`the decision is already ${status}, so it cannot be resolved again`, { status });
  },
  notFound: () => orgErrors.notFound('decision'),
});
