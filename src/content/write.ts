/**
 * How every content write runs: one transaction that also announces, on the change
 * feed (platform/changes.ts), which kind of content changed and which slugs. Every process's read caches —
 * the REST public cache and the domain read cache (read-cache.ts) — drop what it makes stale when it commits,
 * so a reader on any process sees a committed write as soon as the notification arrives, and a client of
 * this process sees its own write on its very next read.
 */
import { transact } from '../platform/changes.js';
import type { Tx } from '../platform/database.js';
import type { ContentContext } from './context.js';
import type { ContentKind } from './kinds.js';

/** Reports one changed record (its slug, or the asset key); a write that reports nothing announces nothing. */
export type Changed = (slug: string) => void;

/**
 * `ctx.db.transaction(work)` plus the change notice. Call `changed(slug)` for each record the write alters,
 * where it alters it; a write that turns out to change nothing (a duplicate vote, an update to the same
 * values) reports nothing.
 *
 * Inside `atomically` (mcp/atomically.ts) the write is a savepoint of the enclosing transaction and reports
 * to it: the enclosing write announces everything once, on its own commit.
 */
export function writeContent<T>(ctx: ContentContext, kind: ContentKind, work: (tx: Tx, changed: Changed) => Promise<T>): Promise<T> {
  const enclosing = ctx.enclosingWrite;
  if (enclosing) return ctx.db.transaction((tx) => work(tx, (slug) => enclosing({ kind, key: slug })));
  return transact(ctx.db, ctx.changes, (tx, report) => work(tx, (slug) => report({ kind, key: slug })));
}
