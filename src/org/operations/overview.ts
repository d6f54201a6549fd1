/**
 * The operations a person's console home shows (DESIGN 4.6): those in progress (queued, running or paused for a
 * person) and those that failed in the last day, newest first, with what each is about (its capability's name or its
 * task's title) and its agent's and space's names — within what the person may see: owners and admins everything,
 * anyone else their own and their spaces' operations.
 */
import { and, desc, eq, gt, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { agents, capabilities, operations, spaces, tasks } from '../schema.js';

export interface OperationsScope {
  all: boolean;
  personId: string;
  spaceIds: readonly string[];
}

export interface OverviewOperation {
  id: string;
  kind: string;
  /** The capability's name or the task's title; null for a message or a question (its agent says what it is). */
  about: string | null;
  status: string;
  agentName: string | null;
  spaceName: string | null;
  createdAt: string;
  finishedAt: string | null;
  error: { code: string; message: string } | null;
}

export function operationsScopeCondition(scope: OperationsScope): SQL | undefined {
  if (scope.all) return undefined;
  const own = eq(operations.personId, scope.personId);
  return scope.spaceIds.length ? or(own, inArray(operations.spaceId, [...scope.spaceIds])) : own;
}

/** The capability a capability operation runs, as its stored input names it. */
export const capabilityIdOf = sql<string | null>`(${operations.input} ->> 'capability_id')`;
/** The task a task operation runs, as its stored input names it. */
const taskIdOf = sql<string | null>`(${operations.input} ->> 'task_id')`;

/** How much of a question names its ask: a list's line, not the question (up to 2,000 characters) whole. */
const QUESTION_SHOWN = 120;

/**
 * What an operation is about: its capability's name, its task's title, or its question (cut to a line). Subqueries
 * rather than joins, read only for the rows shown: a join of each would cost the planner more than the page's whole
 * read (0.75 against 0.47 ms).
 */
export const aboutOperation = sql<string | null>`CASE ${operations.kind}
  WHEN 'capability' THEN (SELECT ${capabilities.name} FROM ${capabilities} WHERE ${capabilities.id} = ${capabilityIdOf})
  WHEN 'task' THEN (SELECT ${tasks.title} FROM ${tasks} WHERE ${tasks.id} = ${taskIdOf})
  WHEN 'ask' THEN (SELECT CASE WHEN length(q) > ${sql.raw(String(QUESTION_SHOWN))} THEN left(q, ${sql.raw(String(QUESTION_SHOWN - 1))}) || '…' ELSE q END
    FROM (SELECT ${operations.input} ->> 'question' AS q) AS asked) END`;

const ACTIVE = ['queued', 'running', 'paused'] as const;

async function overviewRows(db: Queryable, where: SQL | undefined, limit: number): Promise<OverviewOperation[]> {
  return db
    .select({
      id: operations.id,
      kind: operations.kind,
      about: aboutOperation,
      status: operations.status,
      agentName: agents.name,
      spaceName: spaces.name,
      createdAt: operations.createdAt,
      finishedAt: operations.finishedAt,
      error: operations.error,
    })
    .from(operations)
    .leftJoin(agents, eq(agents.id, operations.agentId))
    .leftJoin(spaces, eq(spaces.id, operations.spaceId))
    .where(where)
    .orderBy(desc(operations.createdAt))
    .limit(limit);
}

export async function operationsOverview(db: Queryable, scope: OperationsScope, limit = 10): Promise<{ inProgress: OverviewOperation[]; failed: OverviewOperation[] }> {
  const scoped = operationsScopeCondition(scope);
  const [inProgress, failed] = await Promise.all([
    overviewRows(db, and(inArray(operations.status, [...ACTIVE]), scoped), limit),
    overviewRows(db, and(eq(operations.status, 'failed'), gt(operations.finishedAt, sql`now() - interval '1 day'`), scoped), limit),
  ]);
  return { inProgress, failed };
}
