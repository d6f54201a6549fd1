/**
 * Agents' monthly usage (DESIGN 4.5: budgets count per agent per calendar month, UTC): every concurrent
 * charge is counted, and months turn over at UTC midnight whatever the server's zone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentUsage, chargeAgent, usageMonth } from '../../src/org/agents/usage.js';
import { upsertDeclaredAgent } from '../../src/org/agents/records.js';
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/platform/database.js';
import { engines } from '../helpers/databases.js';
import { openOrgDatabase } from '../helpers/org.js';

describe.each(engines)('agent usage on %s', (engine) => {
  let database: Database;
  let close: () => Promise<void>;
  let agentId: string;
  beforeAll(async () => {
    ({ database, close } = await openOrgDatabase(engine));
    const declare = (key: string, budget: number | null) =>
      upsertDeclaredAgent(database.db, { key, name: key, description: '', autonomy: 2, responsiblePersonId: null, budget, delivery: null });
    await declare('metered', 10);
    await declare('unmetered', null);
    [{ id: agentId }] = await database.rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'metered'`);
  });
  afterAll(() => close());

  it('counts every one of many concurrent charges', async () => {
    const at = new Date('2031-03-15T12:00:00Z');
    const totals = await Promise.all(Array.from({ length: 20 }, () => chargeAgent(database.db, agentId, 2, at)));
    expect(Math.max(...totals)).toBe(40);
    expect(new Set(totals).size).toBe(20);
    expect(await agentUsage(database.db, agentId, '2031-03')).toEqual({ month: '2031-03', used: 40, budget: 10, remaining: 0 });
  });

  it('keeps each UTC calendar month apart', async () => {
    await chargeAgent(database.db, agentId, 3, new Date('2031-04-30T23:59:59.999Z'));
    await chargeAgent(database.db, agentId, 4, new Date('2031-05-01T00:00:00.000Z'));
    expect(usageMonth(new Date('2031-04-30T23:59:59.999Z'))).toBe('2031-04');
    expect(await agentUsage(database.db, agentId, '2031-04')).toMatchObject({ used: 3, remaining: 7 });
    expect(await agentUsage(database.db, agentId, '2031-05')).toMatchObject({ used: 4, remaining: 6 });
    expect(await agentUsage(database.db, agentId, '2031-06')).toEqual({ month: '2031-06', used: 0, budget: 10, remaining: 10 });
  });

  it('shows no budget and nothing remaining to count for an agent without a budget, and nothing for an unknown one', async () => {
    const [{ id }] = await database.rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'unmetered'`);
    await chargeAgent(database.db, id, 5);
    expect(await agentUsage(database.db, id)).toEqual({ month: usageMonth(), used: 5, budget: null, remaining: null });
    expect(await agentUsage(database.db, 'agt_unknown')).toBeUndefined();
  });
});
