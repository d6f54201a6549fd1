/**
 * What the organization announces on its change feed (platform/changes.ts), so that what each process keeps in
 * memory (read-cache.ts) is dropped on every process the moment a write commits. Few, coarse kinds: the
 * directory changes seldom, and dropping all of it on any change is simpler than tracing who read what.
 */
import { transact, type ChangeFeed } from '../platform/changes.js';
import type { Db, Tx } from '../platform/database.js';
import type { Changed } from '../auth/index.js';

/** Announced by every write to people, the organization, spaces, their members, agents or capabilities (no key). */
export const ORG_DIRECTORY = 'org_directory';

/** Announced by every memory write (memory/write.ts; no key): search results hold many items. */
export const ORG_MEMORY = 'memory';

/**
 * `ctx.db.transaction(work)` that announces `kinds` in it: every process hears them when it commits, this one
 * before the write answers. `work` may report more through `changed` (a revocation, auth/tokens.ts).
 */
export function writeOrg<T>(ctx: { db: Db; changes: ChangeFeed }, kinds: readonly string[], work: (tx: Tx, changed: Changed) => Promise<T>): Promise<T> {
  return transact(ctx.db, ctx.changes, async (tx, changed) => {
    const value = await work(tx, changed);
    for (const kind of kinds) changed({ kind });
    return value;
  });
}
