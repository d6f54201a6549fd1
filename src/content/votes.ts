/**
 * Roadmap votes (spec 4.4, DESIGN 3): anyone may vote for a public item, once per `voter_id`, without the
 * secret. A vote is a row keyed by (item, voter): `INSERT … ON CONFLICT DO NOTHING` and `DELETE` tell
 * whether this request changed anything, and only then is the item's counter moved, in the same
 * statement. So duplicates are ignored and the count stays exact under any concurrency: a concurrent vote on
 * the same item waits for the row lock and then adds to the committed count (READ COMMITTED re-reads the
 * updated row before updating it).
 *
 * A vote is one statement, its own transaction: the item lookup, the vote row and the counter as data-modifying
 * CTEs, and the change notice in its final SELECT. All votes for one item queue on that item's row lock, held
 * until the commit: as one round trip instead of four (BEGIN, the statement, the notice, COMMIT), a vote holds
 * the lock and its pooled connection for that round trip alone, which matters when a crowd votes at once
 * (hundreds of requests on a pool of ten). The counter is in no index (schema.ts), so its UPDATE is HOT.
 *
 * Votes are not written to the activity log: they have no actor (spec 4.4 exempts voting from the actor
 * fields), and the log records editorial changes. They do not revalidate the rendered site either; the
 * count is read live from the API.
 */
import { sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { databaseError } from '../platform/database.js';
import type { ContentContext } from './context.js';
import { contentErrors } from './errors.js';

export const voteInput = z.object({ voter_id: z.string().min(1).max(200).describe('who votes; one vote per voter per item') }).strict();
export type VoteInput = z.infer<typeof voteInput>;

export interface VoteResult {
  votes: number;
  voted: boolean;
}

export async function castVote(ctx: ContentContext, slug: string, input: VoteInput): Promise<VoteResult> {
  const votes = await countedChange(ctx, slug, (announce) => sql`
      WITH item AS (SELECT id, votes FROM roadmap_items WHERE slug = ${slug} AND public),
      added AS (
        INSERT INTO roadmap_votes (item_id, voter_id) SELECT id, ${input.voter_id} FROM item
        ON CONFLICT DO NOTHING RETURNING item_id
      ),
      counted AS (
        UPDATE roadmap_items SET votes = roadmap_items.votes + 1 FROM added WHERE roadmap_items.id = added.item_id
        RETURNING roadmap_items.votes
      )
      SELECT (SELECT votes FROM counted) AS counted, item.votes AS seen, ${announce} AS announced FROM item`);
  return { votes, voted: true };
}

export async function withdrawVote(ctx: ContentContext, slug: string, input: VoteInput): Promise<VoteResult> {
  const votes = await countedChange(ctx, slug, (announce) => sql`
      WITH item AS (SELECT id, votes FROM roadmap_items WHERE slug = ${slug} AND public),
      removed AS (
        DELETE FROM roadmap_votes USING item WHERE roadmap_votes.item_id = item.id AND roadmap_votes.voter_id = ${input.voter_id}
        RETURNING roadmap_votes.item_id
      ),
      counted AS (
        UPDATE roadmap_items SET votes = roadmap_items.votes - 1 FROM removed WHERE roadmap_items.id = removed.item_id
        RETURNING roadmap_items.votes
      )
      SELECT (SELECT votes FROM counted) AS counted, item.votes AS seen, ${announce} AS announced FROM item`);
  return { votes, voted: false };
}

/** What a vote statement answers: no row for an unknown or non-public item; `counted` only when it changed the count. */
interface CountRow {
  counted: number | null;
  seen: number;
}

/**
 * Runs a vote statement: the count it moved (announcing the change), or the count it saw when it changed
 * nothing. `statement` places `announce` in its final SELECT: on its own the statement is its own
 * transaction and announces the change itself, only when `counted` has a row (ChangeFeed `notification`), so
 * the item's row lock is held for this one round trip; inside `atomically` it is a savepoint of the enclosing
 * write, which announces on its own commit (write.ts).
 *
 * Only public items take votes; a non-public one answers 404 like a missing one (DESIGN 3), and so does an
 * item deleted between the lookup and the vote (its foreign key fails).
 */
async function countedChange(ctx: ContentContext, slug: string, statement: (announce: SQL) => SQL): Promise<number> {
  const change = { kind: 'roadmap', key: slug } as const;
  const enclosing = ctx.enclosingWrite;
  try {
    const result = enclosing
      ? await ctx.db.transaction((tx) => tx.execute(statement(sql`NULL`)))
      : await ctx.db.execute(statement(sql`(SELECT ${ctx.changes.notification([change])} FROM counted)`));
    const [row] = (result as unknown as { rows: CountRow[] }).rows;
    if (!row) throw contentErrors.notFound('roadmap item', slug);
    if (row.counted === null) return Number(row.seen);
    if (enclosing) enclosing(change);
    else ctx.changes.deliver([change]);
    return Number(row.counted);
  } catch (error) {
    if (databaseError(error)?.code === '23503') throw contentErrors.notFound('roadmap item', slug);
    throw error;
  }
}
