/**
 * Who is asked to decide (DESIGN 4.4, 4.8): the one place that says which people a decision waits for, so the email
 * that tells them and the rules that let them resolve it cannot drift apart.
 */
import { and, eq, inArray, ne, or } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { agents, decisions, operations, people } from '../schema.js';

/** A person a decision or its reminder is sent to. */
export interface Recipient {
  id: string;
  name: string;
  email: string;
  /** Their choice on /account: whether they want email at all. */
  emailNotifications: boolean;
}

const recipientColumns = { id: people.id, name: people.name, email: people.email, emailNotifications: people.emailNotifications };

/**
 * The people asked to decide: the agent's responsible person; when it has none (or they were removed), the owners
 * and admins. A decision that needs approvals from several people asks everyone who may approve (the responsible
 * person and the owners and admins) except the person on whose behalf the action was asked: they never count as
 * one of the approvals, so asking them would be asking for nothing. Unknown decision: nobody.
 */
export async function decidersOf(db: Queryable, decisionId: string): Promise<Recipient[]> {
  const [decision] = await db
    .select({ approvalsRequired: decisions.approvalsRequired, responsibleId: people.id, requestedFor: operations.personId })
    .from(decisions)
    .innerJoin(agents, eq(agents.id, decisions.agentId))
    .innerJoin(operations, eq(operations.id, decisions.operationId))
    .leftJoin(people, and(eq(people.id, agents.responsiblePersonId), eq(people.status, 'active')))
    .where(eq(decisions.id, decisionId));
  if (!decision) return [];
  if (decision.approvalsRequired > 1) {
    const mayApprove = decision.responsibleId ? or(ownerOrAdmin, eq(people.id, decision.responsibleId)) : ownerOrAdmin;
    return activePeople(db, and(mayApprove, ne(people.id, decision.requestedFor)));
  }
  if (decision.responsibleId) return activePeople(db, eq(people.id, decision.responsibleId));
  return ownersAndAdmins(db);
}

/** The organization's active owners and admins: who governs every agent, and who hears of a decision left waiting. */
export function ownersAndAdmins(db: Queryable): Promise<Recipient[]> {
  return activePeople(db, ownerOrAdmin);
}

const ownerOrAdmin = inArray(people.role, ['owner', 'admin']);

function activePeople(db: Queryable, condition: ReturnType<typeof and>): Promise<Recipient[]> {
  return db
    .select(recipientColumns)
    .from(people)
    .where(and(eq(people.status, 'active'), condition))
    .orderBy(people.email);
}
