/**
 * Roadmap votes (spec 4.4, DESIGN 3): anyone may vote for a public item, once per `voter_id`, without the
 * secret. A vote is a row keyed by (item, voter): `INSERT … ON CONFLICT DO NOTHING` and `DELETE` tell
 * whether this request changed anything, and only then is the item's counter moved, in the same
 * transaction. So duplicates are ignored and the count stays exact under any concurrency.
 *
 * Votes are not written to the activity log: they have no actor (spec 4.4 exempts voting from the actor
 * fields), and the log records editorial changes. They do not revalidate the rendered site either; the
 * count is read live from the API.
 */
import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../platform/database.js';
import type { ContentContext } from './context.js';
import { contentErrors } from './errors.js';
import { databaseError } from './roadmap.js';
import { roadmapItems, roadmapVotes } from './schema.js';
import { writeContent, type Changed } from './write.js';

export const voteInput = z.object({ voter_id: z.string().min(1).max(200).describe('who votes; one vote per voter per item') }).strict();
export type VoteInput = z.infer<typeof voteInput>;

export interface VoteResult {
  votes: number;
  voted: boolean;
}

export async function castVote(ctx: ContentContext, slug: string, input: VoteInput): Promise<VoteResult> {
  const votes = await inTransaction(ctx, slug, async (tx, changed) => {
    const itemId = await publicItemId(tx, slug);
    const inserted = await tx
      .insert(roadmapVotes)
      .values({ itemId, voterId: input.voter_id })
      .onConflictDoNothing()
      .returning({ itemId: roadmapVotes.itemId });
    if (inserted.length === 0) return currentCount(tx, itemId);
    changed(slug);
    return moveCount(tx, itemId, 1);
  });
  return { votes, voted: true };
}

export async function withdrawVote(ctx: ContentContext, slug: string, input: VoteInput): Promise<VoteResult> {
  const votes = await inTransaction(ctx, slug, async (tx, changed) => {
    const itemId = await publicItemId(tx, slug);
    const deleted = await tx
      .delete(roadmapVotes)
      .where(and(eq(roadmapVotes.itemId, itemId), eq(roadmapVotes.voterId, input.voter_id)))
      .returning({ itemId: roadmapVotes.itemId });
    if (deleted.length === 0) return currentCount(tx, itemId);
    changed(slug);
    return moveCount(tx, itemId, -1);
  });
  return { votes, voted: false };
}

/** An item deleted between the lookup and the vote fails the foreign key: that is a 404 too. */
async function inTransaction(ctx: ContentContext, slug: string, work: (tx: Tx, changed: Changed) => Promise<number>): Promise<number> {
  try {
    return await writeContent(ctx, 'roadmap', work);
  } catch (error) {
    if (databaseError(error)?.code === '23503') throw contentErrors.notFound('roadmap item', slug);
    throw error;
  }
}

/** Only public items take votes; a non-public one answers 404 like a missing one (DESIGN 3). */
async function publicItemId(tx: Tx, slug: string): Promise<number> {
  const [item] = await tx
    .select({ id: roadmapItems.id })
    .from(roadmapItems)
    .where(and(eq(roadmapItems.slug, slug), eq(roadmapItems.public, true)))
    .limit(1);
  if (!item) throw contentErrors.notFound('roadmap item', slug);
  return item.id;
}

async function moveCount(tx: Tx, itemId: number, delta: 1 | -1): Promise<number> {
  const [row] = await tx
    .update(roadmapItems)
    .set({ votes: sql`${roadmapItems.votes} + ${delta}` })
    .where(eq(roadmapItems.id, itemId))
    .returning({ votes: roadmapItems.votes });
  return row.votes;
}

async function currentCount(tx: Tx, itemId: number): Promise<number> {
  const [row] = await tx.select({ votes: roadmapItems.votes }).from(roadmapItems).where(eq(roadmapItems.id, itemId));
  return row.votes;
}
