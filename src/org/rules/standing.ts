/**
 * Standing rules made on the console (DESIGN 4.4, 4.6, issue 20 item 1): owners and admins create, edit and delete
 * them, and switch a shadow rule to enforced once its firings look right. They are checked by the organization
 * file's own rule schema (`standingRuleSchema`), so a rule means the same wherever it was written, and stored beside
 * the file's rules, after them in `position`: the gate reads both in that order (`gateRulesSql`).
 *
 * The file's rules (`managed_by = 'file'`) are listed too, and changed only in the file.
 */
import { asc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { inTransaction, type Queryable, type Tx } from '../../platform/database.js';
import { toIso } from '../../platform/time.js';
import { recordActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import type { RuleConditions } from '../gate/index.js';
import { id } from '../fields.js';
import { newId } from '../ids.js';
import type { StandingRule } from '../org-file/schema.js';
import { assertManager } from '../people/manage.js';
import type { Person } from '../people/records.js';
import { standingRules } from '../schema.js';

export interface StandingRuleRecord {
  id: string;
  name: string;
  when: RuleConditions;
  then: StandingRule['then'];
  mode: StandingRule['mode'];
  approvals: number | null;
  managed_by: 'file' | 'console';
  updated_at: string;
}

export const ruleIdInput = z.object({ rule_id: id() });

/** Every standing rule in the gate's order: the file's, then the console's. */
export async function listStandingRules(db: Queryable): Promise<StandingRuleRecord[]> {
  const rows = await db.select().from(standingRules).orderBy(asc(standingRules.position), asc(standingRules.createdAt));
  return rows.map(toRecord);
}

export async function getStandingRule(db: Queryable, ruleId: string): Promise<StandingRuleRecord | null> {
  const [row] = await db.select().from(standingRules).where(eq(standingRules.id, ruleId));
  return row ? toRecord(row) : null;
}

function toRecord(row: typeof standingRules.$inferSelect): StandingRuleRecord {
  return {
    id: row.id,
    name: row.name,
    when: row.when as RuleConditions,
    then: row.then,
    mode: row.mode,
    approvals: row.approvals,
    managed_by: row.managedBy,
    updated_at: toIso(row.updatedAt),
  };
}

/** The stored columns of a checked rule. */
function columns(rule: StandingRule) {
  return { name: rule.name, when: rule.when, then: rule.then, mode: rule.mode, approvals: rule.approvals ?? null };
}

export async function createStandingRule(db: Queryable, actor: Person, rule: StandingRule): Promise<string> {
  assertManager(actor);
  return inTransaction(db, async (tx) => {
    const ruleId = newId('rul');
    // Last in the gate's order; concurrent creations may share a position, and then the older one comes first.
    await tx.insert(standingRules).values({
      id: ruleId,
      position: sql`(SELECT coalesce(max(${standingRules.position}) + 1, 0) FROM ${standingRules})`,
      managedBy: 'console',
      ...columns(rule),
    });
    await recordActivity(tx, { kind: 'rule.created', summary: `created the rule ${rule.name}`, personId: actor.id, subject: ruleId, details: columns(rule) });
    return ruleId;
  });
}

/** The console rule an owner or admin is about to change, locked until the change commits; a file's rule is refused. */
async function lockConsoleRule(tx: Tx, ruleId: string): Promise<StandingRuleRecord> {
  return consoleRule(await tx.select().from(standingRules).where(eq(standingRules.id, ruleId)).for('update'));
}

/** The console rule a change would act on, refused as the change would refuse it: what a confirmation shows. */
export async function consoleRuleToChange(db: Queryable, actor: Person, ruleId: string): Promise<StandingRuleRecord> {
  assertManager(actor);
  return consoleRule(await db.select().from(standingRules).where(eq(standingRules.id, ruleId)));
}

function consoleRule([row]: Array<typeof standingRules.$inferSelect>): StandingRuleRecord {
  if (!row) throw orgErrors.notFound('standing rule');
  if (row.managedBy === 'file') throw orgErrors.managedByFile(`The rule ${row.name}`);
  return toRecord(row);
}

export async function updateStandingRule(db: Queryable, actor: Person, ruleId: string, rule: StandingRule): Promise<void> {
  assertManager(actor);
  await inTransaction(db, async (tx) => {
    const before = await lockConsoleRule(tx, ruleId);
    await tx.update(standingRules).set({ ...columns(rule), updatedAt: sql`now()` }).where(eq(standingRules.id, ruleId));
    const { name, when, then, mode, approvals } = before;
    await recordActivity(tx, {
      kind: 'rule.updated',
      summary: `changed the rule ${rule.name}`,
      personId: actor.id,
      subject: ruleId,
      details: { before: { name, when, then, mode, approvals }, after: columns(rule) },
    });
  });
}

export async function deleteStandingRule(db: Queryable, actor: Person, ruleId: string): Promise<void> {
  assertManager(actor);
  await inTransaction(db, async (tx) => {
    const rule = await lockConsoleRule(tx, ruleId);
    await tx.delete(standingRules).where(eq(standingRules.id, ruleId));
    await recordActivity(tx, { kind: 'rule.deleted', summary: `deleted the rule ${rule.name}`, personId: actor.id, subject: ruleId, details: { when: rule.when, then: rule.then } });
  });
}

/** A shadow rule starts deciding: what it only recorded until now, the gate now enforces. */
export async function enforceStandingRule(db: Queryable, actor: Person, ruleId: string): Promise<void> {
  assertManager(actor);
  await inTransaction(db, async (tx) => {
    const rule = await lockConsoleRule(tx, ruleId);
    if (rule.mode === 'enforce') return;
    await tx.update(standingRules).set({ mode: 'enforce', updatedAt: sql`now()` }).where(eq(standingRules.id, ruleId));
    await recordActivity(tx, { kind: 'rule.enforced', summary: `switched the rule ${rule.name} from shadow to enforced`, personId: actor.id, subject: ruleId });
  });
}
