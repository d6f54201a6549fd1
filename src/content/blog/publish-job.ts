/**
 * The job that publishes a scheduled post at its `publish_at` (DESIGN 3), exactly once even with several
 * processes running. `schedulePost` (workflow.ts) enqueues it; content/jobs.ts registers it.
 */
import { and, eq, sql } from 'drizzle-orm';
import { jobKind, type JobHandler } from '../../platform/jobs.js';
import { orderedNow, toIso } from '../../platform/time.js';
import { recordActivity } from '../activity.js';
import type { Actor } from '../actor.js';
import type { ContentContext } from '../context.js';
import { requestRevalidation } from '../revalidation.js';
import { blogPosts } from '../schema.js';
import { writeContent } from '../write.js';

/** Who publishes a scheduled post when its time comes. */
export const SCHEDULER_ACTOR: Actor = { actor_id: 'scheduler', actor_type: 'system' };
export const PUBLISH_POST_JOB = 'publish-post';
type PublishPostPayload = { post_id: number };
export const publishPostJobKind = jobKind<PublishPostPayload>(PUBLISH_POST_JOB);

/** One publish job per post: publishing it by hand cancels the job by this key. */
export function publishJobKey(postId: number): string {
  return `${PUBLISH_POST_JOB}:${postId}`;
}

/**
 * Publishes a scheduled post whose time has come; true when this call published it. The conditional
 * UPDATE is the exactly-once guarantee: if two workers ever run the job at once (a lease expired, two
 * processes), the second waits on the row lock, re-checks `status = 'scheduled'`, matches nothing, and
 * records nothing.
 */
export async function publishDuePost(ctx: ContentContext, postId: number): Promise<boolean> {
  const published = await writeContent(ctx, 'blog', async (tx, changed) => {
    const [row] = await tx
      .update(blogPosts)
      .set({ status: 'published', publishedAt: sql`coalesce(${blogPosts.publishedAt}, ${orderedNow()})`, updatedAt: sql`now()` })
      .where(and(eq(blogPosts.id, postId), eq(blogPosts.status, 'scheduled'), sql`${blogPosts.publishAt} <= now()`))
      .returning();
    if (!row) return false;
    changed(row.slug);
    await recordActivity(tx, SCHEDULER_ACTOR, {
      resource: 'blog',
      resourceId: row.slug,
      action: 'published',
      summary: `published scheduled post "${row.title}"`,
      changes: { status: ['scheduled', 'published'], published_at: [null, toIso(row.publishedAt)] },
    });
    await requestRevalidation(ctx, tx, { type: 'blog', slug: row.slug });
    return true;
  });
  if (published) ctx.jobs.wake();
  return published;
}

/** The durable job behind `schedulePost` (registered in content/jobs.ts). */
export function publishPostJob(ctx: ContentContext): JobHandler<PublishPostPayload> {
  return async ({ post_id: postId }) => {
    const published = await publishDuePost(ctx, postId);
    ctx.log.info({ post_id: postId, published }, published ? 'scheduled post published' : 'scheduled post already handled');
  };
}
