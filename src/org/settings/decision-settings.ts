/**
 * Where the organization's decisions are made (issue 21 items 4 and 5, DESIGN 4.9), set in the organization file
 * (`organization.decide_in_browser`, `organization.in_app_decisions`) or on the console's settings page:
 *
 * - `decide_in_browser`: risk tiers whose decisions no AI client resolves, whatever its scopes —
 *   `resolve_decision` over MCP hands them to the person's browser (mcp/decision-reach.ts);
 * - `in_app_decisions`: whether an MCP App may resolve a decision inside the AI client, or opens its page.
 *
 * The organization row has no `managed_by` mark, so the file and the console share these the way `org apply`
 * shares everything else: a file that names a setting sets it on apply; one that leaves it out keeps the console's.
 */
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { inTransaction, type Queryable } from '../../platform/database.js';
import { recordActivity } from '../activity/records.js';
import { decisionPageUrl } from '../decisions/page-url.js';
import { orgErrors } from '../errors.js';
import { RISKS, type Risk } from '../gate/types.js';
import { assertManager } from '../people/manage.js';
import type { Person } from '../people/records.js';
import { organization } from '../schema.js';

export const decisionSettings = z.object({
  decide_in_browser: z.array(z.enum(RISKS)).describe("Risk tiers whose decisions resolve_decision hands to the person's browser"),
  in_app_decisions: z.boolean().describe('Whether an MCP App may resolve a decision inside the AI client'),
});
export type DecisionSettings = z.infer<typeof decisionSettings>;

export async function readDecisionSettings(db: Queryable): Promise<DecisionSettings> {
  const [row] = await db.select({ browser: organization.decideInBrowser, inApp: organization.inAppDecisions }).from(organization).limit(1);
  if (!row) throw orgErrors.notFound('organization');
  return { decide_in_browser: inTierOrder(row.browser), in_app_decisions: row.inApp };
}

/**
 * Issue 21 item 5: a pending decision of a tier the organization has people decide in their browser is not
 * resolved through an AI client, whatever its scopes: the refusal names the decision's page.
 */
export async function refuseIfDecidedInBrowser(db: Queryable, decision: { id: string; status: string; risk: Risk }, origin: string): Promise<void> {
  if (decision.status !== 'pending') return;
  if (!(await readDecisionSettings(db)).decide_in_browser.includes(decision.risk)) return;
  throw orgErrors.decideInBrowser(decision.risk, decision.id, decisionPageUrl(origin, decision.id));
}

/** An owner or admin changes the settings; the activity log says who changed what, from what to what. */
export async function changeDecisionSettings(db: Queryable, actor: Person, wanted: DecisionSettings): Promise<void> {
  assertManager(actor, 'the organization settings');
  const next = { decide_in_browser: inTierOrder(wanted.decide_in_browser), in_app_decisions: wanted.in_app_decisions };
  await inTransaction(db, async (tx) => {
    const [row] = await tx.select({ id: organization.id, browser: organization.decideInBrowser, inApp: organization.inAppDecisions }).from(organization).limit(1).for('update');
    if (!row) throw orgErrors.notFound('organization');
    const before = { decide_in_browser: inTierOrder(row.browser), in_app_decisions: row.inApp };
    const changed = describeChanges(before, next);
    if (!changed.length) return;
    await tx
      .update(organization)
      .set({ decideInBrowser: next.decide_in_browser, inAppDecisions: next.in_app_decisions, updatedAt: sql`now()` })
      .where(eq(organization.id, row.id));
    await recordActivity(tx, {
      kind: 'organization.settings_changed',
      summary: `changed the organization settings: ${changed.join('; ')}`,
      personId: actor.id,
      details: { from: before, to: next },
    });
  });
}

function describeChanges(before: DecisionSettings, after: DecisionSettings): string[] {
  const tiers = (list: Risk[]) => (list.length ? list.join(', ') : 'none');
  const changes: string[] = [];
  if (tiers(before.decide_in_browser) !== tiers(after.decide_in_browser)) {
    changes.push(`decided in the browser: ${tiers(before.decide_in_browser)} → ${tiers(after.decide_in_browser)}`);
  }
  if (before.in_app_decisions !== after.in_app_decisions) changes.push(`decisions in MCP Apps: ${after.in_app_decisions ? 'allowed' : 'not allowed'}`);
  return changes;
}

function inTierOrder(tiers: readonly Risk[]): Risk[] {
  return RISKS.filter((tier) => tiers.includes(tier));
}
