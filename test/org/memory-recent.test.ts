/**
 * memory_recent (src/org/schema.ts, drizzle/0009): each space's newest RECENT_WINDOW items, kept by a trigger on
 * memory_items, where search's first tier looks its matches up. With more items than that, the first tier must
 * still be exactly the newest ones, and the older items still found after them.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { startMemoryOrg, type MemoryOrg } from '../helpers/memory-fixture.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { RECENT_WINDOW, searchMemory } from '../../src/org/memory/search.js';

describe.each(engines)('memory_recent on %s', (engine) => {
  let m: MemoryOrg;
  let owner: OrgMcp;
  beforeAll(async () => {
    m = await startMemoryOrg(engine);
    owner = await connectOrgMcp(m.org, { clientName: 'Owner laptop' });
  });
  afterAll(async () => {
    await owner?.close();
    await m?.close();
  });

  const rows = <T extends Record<string, unknown>>(query: ReturnType<typeof sql>) => m.org.service.database.rows<T>(query);
  const record = (space: string, title: string, body: string) => owner.callOk('record_memory', { kind: 'fact', space_id: space, title, body });

  /** `count` items in `space` in one statement, oldest first, a millisecond apart, ending an hour ago; `title` and the number for titles. */
  async function load(space: string, count: number, title: string) {
    await m.org.service.database.db.execute(sql`
      INSERT INTO memory_items (id, kind, title, body, space_id, lineage_id, recorded_by_type, recorded_by_id, recorded_by_name, recorded_at)
      SELECT 'mem_' || ${title} || '_' || g, 'fact', ${title} || ' ' || g, 'loaded ' || g, ${space}, 'mem_' || ${title} || '_' || g,
             'person', 'per_loader', 'Loader', now() - interval '1 hour' - (${count}::int - g) * interval '1 millisecond'
      FROM generate_series(1, ${count}::int) AS g`);
  }

  /**
   * memory_recent holds every one of the newest RECENT_WINDOW items of `space` (and may hold a few older ones, until a
   * trim), each as it is in memory_items; returns how many it holds.
   */
  async function expectNewestKept(space: string) {
    const [missing] = await rows<{ count: number }>(sql`
      SELECT count(*)::int AS count
      FROM (SELECT id FROM memory_items WHERE space_id = ${space} ORDER BY recorded_at DESC LIMIT ${RECENT_WINDOW}) AS newest
      WHERE NOT EXISTS (SELECT 1 FROM memory_recent WHERE item_id = newest.id)`);
    expect(missing.count).toBe(0);
    const [strays] = await rows<{ count: number }>(sql`
      SELECT count(*)::int AS count FROM memory_recent AS kept LEFT JOIN memory_items AS item ON item.id = kept.item_id
      WHERE kept.space_id = ${space} AND (item.id IS NULL OR item.space_id <> kept.space_id OR item.recorded_at <> kept.recorded_at OR item.search <> kept.search)`);
    expect(strays.count).toBe(0);
    const [kept] = await rows<{ count: number }>(sql`SELECT count(*)::int AS count FROM memory_recent WHERE space_id = ${space}`);
    return kept.count;
  }

  it('keeps each space’s newest items as they are recorded: trimmed at once by a large statement, now and then by small ones', async () => {
    const { general, ops } = m.spaces;
    await load(general, RECENT_WINDOW + 5, 'Wombat');
    expect(await expectNewestKept(general)).toBe(RECENT_WINDOW);
    await record(general, 'Wombat burrow', 'dug today');
    await record(ops, 'Runbook', 'kept apart');
    // One item: trimmed one time in 32 (drizzle/0009), so the space holds its newest items and maybe one more.
    expect(await expectNewestKept(general)).toBeGreaterThanOrEqual(RECENT_WINDOW);
    expect(await expectNewestKept(general)).toBeLessThanOrEqual(RECENT_WINDOW + 1);
    expect(await expectNewestKept(ops)).toBe(1);
    await load(general, 40, 'Dingo');
    expect(await expectNewestKept(general)).toBe(RECENT_WINDOW);
  });

  it('ranks the newest items first with the full window, and still finds the older ones after them', async () => {
    const { general } = m.spaces;
    const db = m.org.service.ctx.db;
    const caller = { spaceIds: [general] };
    // 'Wombat 1' … 'Wombat 5' (and since the Dingos, more of them) are older than the newest RECENT_WINDOW items.
    const [outside] = await rows<{ kept: number }>(sql`SELECT count(*)::int AS kept FROM memory_recent WHERE item_id = 'mem_Wombat_5'`);
    expect(outside.kept).toBe(0);
    const old = await searchMemory(db, { query: '"wombat 5"', limit: 5 }, caller);
    expect(old.items.map((item) => item.title)).toContain('Wombat 5');
    // A strong match older than the window comes after a weak one in it (whether or not its insert trimmed it yet).
    await m.org.service.database.db.execute(sql`
      INSERT INTO memory_items (id, kind, title, body, space_id, lineage_id, recorded_by_type, recorded_by_id, recorded_by_name, recorded_at)
      VALUES ('mem_strong', 'fact', 'Numbat numbat', 'numbat numbat numbat', ${general}, 'mem_strong', 'person', 'per_loader', 'Loader', now() - interval '2 hours')`);
    // Held in memory_recent as a trim not yet made would leave it: the first tier still starts at the boundary.
    await m.org.service.database.db.execute(
      sql`INSERT INTO memory_recent SELECT id, space_id, recorded_at, search FROM memory_items WHERE id = 'mem_strong' ON CONFLICT DO NOTHING`,
    );
    await record(general, 'Plain note', 'a numbat in the body');
    const first = await searchMemory(db, { query: 'numbat', limit: 1 }, caller);
    expect(first.items.map((item) => item.title)).toEqual(['Plain note']);
    const second = await searchMemory(db, { query: 'numbat', limit: 1, cursor: first.next_cursor! }, caller);
    expect(second.items.map((item) => item.title)).toEqual(['Numbat numbat']);
    expect(second.next_cursor).toBeNull();
    // The trigram fallback pages the full window the same way (no word is `umbat`): the newer item, then the older one.
    const fragment = await searchMemory(db, { query: 'umbat', limit: 1 }, caller);
    expect(fragment.items.map((item) => item.title)).toEqual(['Plain note']);
    const older = await searchMemory(db, { query: 'umbat', limit: 5, cursor: fragment.next_cursor! }, caller);
    expect(older.items.map((item) => item.title)).toEqual(['Numbat numbat']);
  });

  it('lets an item go with its row', async () => {
    const { general } = m.spaces;
    const item = await record(general, 'Short-lived', 'removed below');
    await m.org.service.database.db.execute(sql`DELETE FROM memory_items WHERE id = ${item.id}`);
    const [gone] = await rows<{ count: number }>(sql`SELECT count(*)::int AS count FROM memory_recent WHERE item_id = ${item.id}`);
    expect(gone.count).toBe(0);
  });
});
