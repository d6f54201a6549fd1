/**
 * The inbox's count of pending decisions, on every console page: an owner or admin counts every pending decision,
 * anyone else those of the agents they are responsible for; expired ones are not counted. An owner's count is read
 * from decisions_pending_idx alone, without the join to agents a member's needs.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countPendingDecisions, pendingDecisionsCount } from '../../src/org/decisions/records.js';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';

describe.each(engines)('the inbox count on %s', (engine) => {
  let org: TestOrg;
  const owner = { id: 'per_count_owner', role: 'owner' };
  const admin = { id: 'per_count_admin', role: 'admin' };
  const member = { id: 'per_count_member', role: 'member' };

  beforeAll(async () => {
    org = await startOrg(engine);
    const { db } = org.service.database;
    await db.execute(sql`INSERT INTO people (id, email, name, role) VALUES
      ('per_count_owner', 'count-owner@example.com', 'Owner', 'owner'),
      ('per_count_admin', 'count-admin@example.com', 'Admin', 'admin'),
      ('per_count_member', 'count-member@example.com', 'Member', 'member')`);
    await db.execute(sql`INSERT INTO agents (id, kind, name, autonomy, responsible_person_id) VALUES
      ('agt_count_owner', 'declared', 'Owner bot', 2, 'per_count_owner'),
      ('agt_count_member', 'declared', 'Member bot', 2, 'per_count_member')`);
    await db.execute(sql`INSERT INTO capabilities (id, key, name, risk, connector)
      VALUES ('cap_count', 'count_deploy', 'Deploy', 'medium', '{"kind":"webhook","url":"https://example.com/hook"}'::jsonb)`);
    // Three of the owner's agent (one expired, one resolved) and two of the member's agent.
    const decisions: Array<[string, string, string]> = [
      ['1', 'agt_count_owner', `'pending', now() + interval '1 day'`],
      ['2', 'agt_count_owner', `'pending', now() - interval '1 minute'`],
      ['3', 'agt_count_owner', `'approved', now() + interval '1 day'`],
      ['4', 'agt_count_member', `'pending', now() + interval '1 day'`],
      ['5', 'agt_count_member', `'pending', now() + interval '2 days'`],
    ];
    for (const [n, agent, statusAndExpiry] of decisions) {
      await db.execute(sql`INSERT INTO operations (id, kind, status, person_id, agent_id, input)
        VALUES (${`op_count_${n}`}, 'capability', 'paused', 'per_count_owner', ${agent}, '{}'::jsonb)`);
      await db.execute(sql`INSERT INTO decisions (id, operation_id, capability_id, agent_id, input, action_hash, risk, reasons, verdict_id, status, expires_at)
        VALUES (${`dec_count_${n}`}, ${`op_count_${n}`}, 'cap_count', ${agent}, '{}'::jsonb, ${`hash-${n}`}, 'medium', '[]'::jsonb, ${`gv_count_${n}`},
                ${sql.raw(statusAndExpiry)})`);
    }
  });
  afterAll(() => org?.close());

  it('counts every pending decision for an owner or admin, and only their agents’ for anyone else', async () => {
    const { db } = org.service.database;
    expect(await countPendingDecisions(db, owner)).toBe(3);
    expect(await countPendingDecisions(db, admin)).toBe(3);
    expect(await countPendingDecisions(db, member)).toBe(2);
  });

  it('reads an owner’s count from decisions_pending_idx alone, without joining agents', async () => {
    const plan = async (person: { id: string; role: string }) =>
      org.service.database.db.transaction(async (tx) => {
        // The test's few rows are cheaper to scan; what matters is that the index can answer the query.
        await tx.execute(sql`SET LOCAL enable_seqscan = off`);
        const result = await tx.execute(sql`EXPLAIN ${pendingDecisionsCount(tx, person)}`);
        return (result as unknown as { rows: Array<Record<string, unknown>> }).rows.map((line) => String(Object.values(line)[0])).join('\n');
      });
    const owners = await plan(owner);
    expect(owners).toContain('decisions_pending_idx');
    expect(owners).not.toContain('agents');
    expect(await plan(member)).toContain('agents');
  });
});
