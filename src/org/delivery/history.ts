/**
 * What the console shows of deliveries (DESIGN 4.6): an operation's deliveries, and an agent's last delivery
 * and its recent failures, within the reader's scope (a delivery is its operation's).
 */
import { and, desc, eq, gte, sql } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { toIso } from '../../platform/time.js';
import { operationsScopeCondition } from '../operations/overview.js';
import type { ReadScope } from '../read-scope.js';
import { deliveries, operations } from '../schema.js';

export interface DeliveryView {
  id: string;
  operationId: string;
  type: 'message' | 'task' | 'answer';
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  firstAttemptAt: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

const deliveryColumns = {
  id: deliveries.id,
  operationId: deliveries.operationId,
  type: deliveries.type,
  status: deliveries.status,
  attempts: deliveries.attempts,
  firstAttemptAt: deliveries.firstAttemptAt,
  lastError: deliveries.lastError,
  createdAt: deliveries.createdAt,
  updatedAt: deliveries.updatedAt,
};

function toView(row: { firstAttemptAt: string | null; createdAt: string; updatedAt: string } & Omit<DeliveryView, 'firstAttemptAt' | 'createdAt' | 'updatedAt'>): DeliveryView {
  return { ...row, firstAttemptAt: toIso(row.firstAttemptAt), createdAt: toIso(row.createdAt), updatedAt: toIso(row.updatedAt) };
}

/** An operation's deliveries (its first and, for a task, the answers), oldest first; a handful at most. */
export async function deliveriesOfOperation(db: Queryable, operationId: string): Promise<DeliveryView[]> {
  const rows = await db.select(deliveryColumns).from(deliveries).where(eq(deliveries.operationId, operationId)).orderBy(deliveries.createdAt).limit(20);
  return rows.map(toView);
}

/** The agent's latest delivery the reader may see: that of its newest operation that has one. */
export async function lastDeliveryOfAgent(db: Queryable, scope: ReadScope, agentId: string): Promise<DeliveryView | undefined> {
  const [row] = await db
    .select(deliveryColumns)
    .from(operations)
    .innerJoin(deliveries, eq(deliveries.operationId, operations.id))
    .where(and(eq(operations.agentId, agentId), operationsScopeCondition(scope)))
    .orderBy(desc(operations.createdAt), desc(deliveries.createdAt))
    .limit(1);
  return row ? toView(row) : undefined;
}

/** Deliveries to the agent that failed for good in the last `days` days: how many, and the latest few. */
export async function deliveryFailuresOfAgent(
  db: Queryable,
  scope: ReadScope,
  agentId: string,
  options: { days: number; limit: number },
): Promise<{ count: number; latest: DeliveryView[] }> {
  const where = and(
    eq(operations.agentId, agentId),
    gte(operations.createdAt, sql`now() - make_interval(days => ${options.days})`),
    eq(deliveries.status, 'failed'),
    operationsScopeCondition(scope),
  );
  const [counted] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(operations)
    .innerJoin(deliveries, eq(deliveries.operationId, operations.id))
    .where(where);
  const latest = await db
    .select(deliveryColumns)
    .from(operations)
    .innerJoin(deliveries, eq(deliveries.operationId, operations.id))
    .where(where)
    .orderBy(desc(operations.createdAt), desc(deliveries.createdAt))
    .limit(options.limit);
  return { count: counted?.count ?? 0, latest: latest.map(toView) };
}
