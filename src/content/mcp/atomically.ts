/**
 * One tool call sometimes needs two domain operations that must land together: update_changelog_entry may
 * change fields and move the status in one call, and a refused move must leave the fields unchanged too
 * (nothing is written by a refused call). The domain functions each open their own transaction; run inside
 * this one, those become savepoints of it, so the rules stay in the domain and the call stays atomic.
 * Job wake-ups the domain asks for are held until the outer transaction has committed, when the jobs it
 * enqueued are visible to the worker.
 */
import { transact } from '../../platform/changes.js';
import type { ContentContext } from '../context.js';

export async function atomically<T>(ctx: ContentContext, work: (ctx: ContentContext) => Promise<T>): Promise<T> {
  let wakeWanted = false;
  const jobs = { ...ctx.jobs, wake: () => void (wakeWanted = true) };
  // The domain's writes report their changes here; they are announced once, with this transaction's commit.
  const result = await transact(ctx.db, ctx.changes, (tx, changed) => work({ ...ctx, db: tx, jobs, enclosingWrite: changed }));
  if (wakeWanted) ctx.jobs.wake();
  return result;
}
