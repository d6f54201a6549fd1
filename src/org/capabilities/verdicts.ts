/**
 * The gate's stored verdicts as the console shows them (DESIGN 4.4 "stores each verdict with its inputs", 4.6):
 * an operation's verdicts, a capability's recent ones, and how often each shadow rule would have fired. A verdict
 * is the reader's when its space is theirs or the operation it decided is their own.
 */
import { and, desc, eq, gte, or, sql, type SQL } from 'drizzle-orm';
import { queryRows, type Queryable } from '../../platform/database.js';
import { toIso } from '../../platform/time.js';
import type { ShadowEntry, Verdict } from '../gate/index.js';
import { scopeCondition, type ReadScope } from '../read-scope.js';
import { gateVerdictRecord } from './catalogue.js';
import { agents, gateVerdicts, operations, spaces } from '../schema.js';

export interface VerdictView {
  id: string;
  verdict: Verdict;
  reasons: string[];
  ruleIds: string[];
  shadow: ShadowEntry[];
  agent: { id: string; name: string | null };
  space: { id: string; name: string | null } | null;
  operationId: string | null;
  createdAt: string;
}

const verdictColumns = {
  id: gateVerdicts.id,
  verdict: gateVerdicts.verdict,
  reasons: gateVerdicts.reasons,
  ruleIds: gateVerdicts.ruleIds,
  shadow: gateVerdicts.shadow,
  agentId: gateVerdicts.agentId,
  agentName: agents.name,
  spaceId: gateVerdicts.spaceId,
  spaceName: spaces.name,
  operationId: gateVerdicts.operationId,
  createdAt: gateVerdicts.createdAt,
};

interface VerdictRow {
  id: string;
  verdict: Verdict;
  reasons: string[];
  ruleIds: string[];
  shadow: unknown;
  agentId: string;
  agentName: string | null;
  spaceId: string | null;
  spaceName: string | null;
  operationId: string | null;
  createdAt: string;
}

/** The stored `shadow[]` as the gate writes it (`gateVerdictRecord`); an entry of another shape is not shown. */
function shadowEntries(stored: unknown): ShadowEntry[] {
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((entry) => {
    const parsed = gateVerdictRecord.shape.shadow.element.safeParse(entry);
    return parsed.success ? [parsed.data] : [];
  });
}

function toView(row: VerdictRow): VerdictView {
  return {
    id: row.id,
    verdict: row.verdict,
    reasons: row.reasons,
    ruleIds: row.ruleIds,
    shadow: shadowEntries(row.shadow),
    agent: { id: row.agentId, name: row.agentName },
    space: row.spaceId ? { id: row.spaceId, name: row.spaceName } : null,
    operationId: row.operationId,
    createdAt: toIso(row.createdAt),
  };
}

/** A verdict the reader may see: in their spaces, or about an operation of their own. */
function verdictScope(scope: ReadScope): SQL | undefined {
  const own = sql`EXISTS (SELECT 1 FROM ${operations} WHERE ${operations.id} = ${gateVerdicts.operationId} AND ${operations.personId} = ${scope.personId})`;
  return scope.all ? undefined : or(scopeCondition(scope, { space: gateVerdicts.spaceId }), own);
}

function selectVerdicts(db: Queryable) {
  return db.select(verdictColumns).from(gateVerdicts).leftJoin(agents, eq(agents.id, gateVerdicts.agentId)).leftJoin(spaces, eq(spaces.id, gateVerdicts.spaceId));
}

/** The verdicts that decided an operation (one, or a second after a resume), oldest first. */
export async function verdictsOfOperation(db: Queryable, operationId: string): Promise<VerdictView[]> {
  const rows = await selectVerdicts(db).where(eq(gateVerdicts.operationId, operationId)).orderBy(gateVerdicts.createdAt).limit(10);
  return rows.map(toView);
}

/** The capability's latest verdicts the reader may see, newest first. */
export async function recentVerdicts(db: Queryable, scope: ReadScope, capabilityId: string, limit: number): Promise<VerdictView[]> {
  const rows = await selectVerdicts(db)
    .where(and(eq(gateVerdicts.capabilityId, capabilityId), verdictScope(scope)))
    .orderBy(desc(gateVerdicts.createdAt), desc(gateVerdicts.id))
    .limit(limit);
  return rows.map(toView);
}

/**
 * How often each shadow rule would have fired in the last `days` days (verdicts the reader may see), by rule id: on
 * one capability, or on every capability when `capabilityId` is null (the rules page).
 */
export async function shadowFirings(db: Queryable, scope: ReadScope, capabilityId: string | null, days: number): Promise<Map<string, number>> {
  const where = and(capabilityId === null ? undefined : eq(gateVerdicts.capabilityId, capabilityId), gte(gateVerdicts.createdAt, sql`now() - make_interval(days => ${days})`), verdictScope(scope));
  const rows = await queryRows<{ rule_id: string; count: number }>(
    db,
    sql`SELECT entry ->> 'rule_id' AS rule_id, count(*)::int AS count
      FROM ${gateVerdicts} CROSS JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(${gateVerdicts.shadow}) WHEN 'array' THEN ${gateVerdicts.shadow} ELSE '[]'::jsonb END) AS entry
      WHERE ${where} GROUP BY 1`,
  );
  return new Map(rows.map((row) => [row.rule_id, Number(row.count)]));
}
