/**
 * Standing rules (DESIGN 4.2, 4.4): an ordered list the gate reads first match first. The organization
 * file declares the whole list, so applying it replaces the stored list — unless nothing changed, so
 * that re-applying the same file keeps the rule ids that stored gate verdicts refer to.
 */
import { isDeepStrictEqual } from 'node:util';
import { asc } from 'drizzle-orm';
import type { Queryable } from '../platform/database.js';
import { newId } from './ids.js';
import { standingRules } from './schema.js';

export interface RuleInput {
  name: string;
  when: Record<string, unknown>;
  then: 'deny' | 'require_approval' | 'allow';
}

export async function replaceStandingRules(db: Queryable, rules: RuleInput[]): Promise<{ changed: boolean }> {
  const stored = await db
    .select({ name: standingRules.name, when: standingRules.when, then: standingRules.then })
    .from(standingRules)
    .orderBy(asc(standingRules.position));
  if (isDeepStrictEqual(stored, rules.map(({ name, when, then }) => ({ name, when, then })))) return { changed: false };
  await db.delete(standingRules);
  if (rules.length) {
    await db.insert(standingRules).values(rules.map((rule, position) => ({ id: newId('rul'), position, ...rule })));
  }
  return { changed: true };
}
