/**
 * Writes of blog posts (spec 2.6, 3.1; DESIGN section 3): create, edit, and the state machine draft → review →
 * published → archived, plus direct publish, scheduled publishing and deletes of drafts only. REST routes and
 * MCP tools both call these functions, so every rule — slugs, submit validation, activity, revalidation —
 * lives here; the records are in records.ts, the reads in queries.ts, the scheduled publish in publish-job.ts.
 *
 * Decisions where the spec is silent:
 * - `published_at` is set once, the first time a post is published, and kept through archive and
 *   re-publish: publishing never moves a post that already has a place in the list. Publishing a post that
 *   is already published changes nothing and records nothing.
 * - `created_at` is written with `orderedNow()` so the drafts list pages by it without skips or repeats.
 * - Scheduling (DESIGN 3) moves draft or review to `scheduled`, like a deferred publish, without submit
 *   validation. A scheduled post leaves that state only by publishing (now, or by its job at `publish_at`).
 */
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable, Tx } from '../../platform/database.js';
import { cancelJob } from '../../platform/jobs.js';
import { orderedNow, toIso } from '../../platform/time.js';
import { recordActivity } from '../activity.js';
import type { Actor } from '../actor.js';
import type { ContentContext } from '../context.js';
import { DEFAULT_AUTHOR_NAME, type CreatePostInput, type UpdatePostInput } from '../contract.js';
import { contentErrors } from '../errors.js';
import { isoDate } from '../fields.js';
import { requestRevalidation } from '../revalidation.js';
import { blogPosts } from '../schema.js';
import { insertUnderSlug } from '../slugs.js';
import { allowMove, defineWorkflow, editFields, runMove, type FieldEdit, type FieldProblem, type Workflow } from '../workflow.js';
import { writeContent } from '../write.js';
import { publishJobKey, publishPostJobKind } from './publish-job.js';
import { toPost, type BlogPost, type BlogStatus, type PostRow } from './records.js';

/** `/blog/drafts` is a route of its own, so no post may take that slug. */
const RESERVED_SLUGS = new Set(['drafts']);

/** REST only (`POST /blog/:slug/schedule`). */
export const schedulePostInput = z.strictObject({
  publish_at: isoDate.describe('When to publish; must be in the future'),
});
export type SchedulePostInput = z.infer<typeof schedulePostInput>;

export async function createPost(ctx: ContentContext, data: CreatePostInput, actor: Actor): Promise<BlogPost> {
  const published = data.status === 'published';
  const post = await writeContent(ctx, 'blog', async (tx, changed) => {
    const row = await insertUnderSlug({
      given: data.slug,
      title: data.title,
      reserved: RESERVED_SLUGS,
      isTaken: (candidate) => slugTaken(tx, candidate),
      insert: (slug) =>
        tx
        .insert(blogPosts)
        .values({
          slug,
          title: data.title,
          content: data.content ?? '',
          description: data.description ?? null,
          authorName: data.author_name ?? DEFAULT_AUTHOR_NAME,
          tags: data.tags ?? [],
          status: data.status,
          ogImageUrl: data.og_image_url ?? null,
          publishedAt: published ? orderedNow() : null,
          createdAt: orderedNow(),
        })
        .onConflictDoNothing({ target: blogPosts.slug })
        .returning()
        .then((rows) => rows[0]),
    });
    changed(row.slug);
    await recordActivity(tx, actor, {
      resource: 'blog',
      resourceId: row.slug,
      action: 'created',
      summary: `created ${row.status} post "${row.title}"`,
    });
    if (published) await requestRevalidation(ctx, tx, { type: 'blog', slug: row.slug });
    return toPost(row);
  });
  if (published) ctx.jobs.wake();
  return post;
}

/** The fields an update may change, and how they are stored. */
const postEdit: FieldEdit<PostRow, BlogPost, 'title' | 'content' | 'description' | 'author_name' | 'author_email' | 'tags' | 'og_image_url'> = {
  fields: ['title', 'content', 'description', 'author_name', 'author_email', 'tags', 'og_image_url'],
  toRecord: toPost,
  columns: (after) => ({
    title: after.title,
    content: after.content,
    description: after.description,
    authorName: after.author_name,
    authorEmail: after.author_email,
    tags: after.tags,
    ogImageUrl: after.og_image_url,
  }),
  summary: (row, fields) => `updated ${fields.join(', ')} of "${row.title}"`,
};

/** Edits a post in any state; an edit of a published post asks the site to rebuild its pages. */
export async function updatePost(ctx: ContentContext, slug: string, data: UpdatePostInput, actor: Actor): Promise<BlogPost> {
  return editFields(ctx, postWorkflow, slug, data, postEdit, actor);
}

/** The editorial checks a post must pass to enter review (DESIGN 3); every failing field is reported. */
export function submitProblems(post: Pick<BlogPost, 'title' | 'description' | 'content' | 'tags'>): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const title = post.title.trim().length;
  if (title < 10 || title > 120) problems.push({ field: 'title', message: `must be 10 to 120 characters (is ${title})` });
  const description = post.description?.length ?? 0;
  if (description < 50 || description > 160) {
    problems.push({ field: 'description', message: post.description ? `must be 50 to 160 characters (is ${description})` : 'is required' });
  }
  const content = post.content.trim().length;
  if (content < 300) problems.push({ field: 'content', message: `must be at least 300 characters (is ${content})` });
  if (post.tags.length < 1 || post.tags.length > 10) problems.push({ field: 'tags', message: `must have 1 to 10 tags (has ${post.tags.length})` });
  else if (post.tags.some((tag) => tag.length < 1 || tag.length > 40)) problems.push({ field: 'tags', message: 'each tag must be 1 to 40 characters' });
  return problems;
}

/**
 * The post workflow of spec 3.1 and DESIGN 3: draft → review → published → archived, publishing from any
 * state, scheduling of drafts and posts in review, deleting drafts only.
 */
const postWorkflow: Workflow<BlogStatus, PostRow, 'submit' | 'approve' | 'publish' | 'archive' | 'schedule' | 'delete', typeof blogPosts> = defineWorkflow({
  kind: 'blog',
  table: blogPosts,
  noun: 'post',
  lock: lockPost,
  moves: {
    submit: {
      from: ['draft'],
      to: 'review',
      refusal: 'only a draft can be submitted',
      check: (row) => submitProblems(row),
      action: 'status_changed',
      summary: (row) => `submitted "${row.title}" for review`,
    },
    approve: {
      from: ['review'],
      to: 'published',
      refusal: 'only a post in review can be approved',
      action: 'published',
      summary: (row) => `approved and published "${row.title}"`,
      revalidates: true,
    },
    publish: {
      from: ['draft', 'review', 'scheduled', 'archived'],
      to: 'published',
      refusal: 'a published post cannot be published again',
      action: 'published',
      summary: (row) => `published "${row.title}"`,
      revalidates: true,
      // Publishing by hand overtakes a schedule: its job has nothing left to do.
      alongside: async (_ctx, tx, row) => {
        if (row.status === 'scheduled') await cancelJob(tx, publishJobKey(row.id));
      },
    },
    archive: {
      from: ['published'],
      to: 'archived',
      refusal: 'only a published post can be archived',
      action: 'archived',
      summary: (row) => `archived "${row.title}"`,
      // The site drops the page.
      revalidates: true,
    },
    schedule: { from: ['draft', 'review'], to: 'scheduled', refusal: 'only a draft or a post in review can be scheduled' },
    delete: { from: ['draft'], refusal: 'only a draft can be deleted' },
  },
});

/** Spec 3.1: draft → review, only when the post passes submit validation (422 listing every failure). */
export async function submitPost(ctx: ContentContext, slug: string, actor: Actor): Promise<BlogPost> {
  return toPost(await runMove(ctx, postWorkflow, 'submit', slug, actor));
}

/** Spec 3.1: review → published; approving a post that is not in review is refused. */
export async function approvePost(ctx: ContentContext, slug: string, actor: Actor): Promise<BlogPost> {
  return toPost(await runMove(ctx, postWorkflow, 'approve', slug, actor));
}

/** Spec 3.1: any state → published, skipping review. An already published post is returned unchanged. */
export async function publishPost(ctx: ContentContext, slug: string, actor: Actor): Promise<BlogPost> {
  return toPost(await runMove(ctx, postWorkflow, 'publish', slug, actor, { whenAlreadyThere: 'unchanged' }));
}

/** Spec 3.1: published → archived; archiving anything else is refused. */
export async function archivePost(ctx: ContentContext, slug: string, actor: Actor): Promise<BlogPost> {
  return toPost(await runMove(ctx, postWorkflow, 'archive', slug, actor));
}

/** Spec 3.1: hard delete of drafts only; review, scheduled, published and archived posts are refused. */
export async function deletePost(ctx: ContentContext, slug: string, actor: Actor): Promise<{ slug: string; deleted: true }> {
  return writeContent(ctx, 'blog', async (tx, changed) => {
    const row = await lockPost(tx, slug);
    allowMove(postWorkflow.noun, postWorkflow.moves.delete, row);
    changed(slug);
    await tx.delete(blogPosts).where(eq(blogPosts.id, row.id));
    await recordActivity(tx, actor, { resource: 'blog', resourceId: slug, action: 'deleted', summary: `deleted draft "${row.title}"` });
    return { slug, deleted: true as const };
  });
}

/**
 * DESIGN 3: draft or review → scheduled, publishing itself at `publish_at`. The publish job is enqueued in
 * the same transaction, so a schedule is never recorded without the job that carries it out.
 */
export async function schedulePost(ctx: ContentContext, slug: string, { publish_at }: SchedulePostInput, actor: Actor): Promise<BlogPost> {
  const publishAt = new Date(publish_at);
  if (publishAt.getTime() <= Date.now()) {
    throw contentErrors.invalidRequest('publish_at must be in the future', { issues: [{ field: 'body.publish_at', message: 'must be in the future' }] });
  }
  return writeContent(ctx, 'blog', async (tx, changed) => {
    const row = await lockPost(tx, slug);
    const scheduled = await postWorkflow.states.move(tx, row.id, 'schedule', { publishAt: publishAt.toISOString() });
    changed(slug);
    await publishPostJobKind.enqueue(tx, { post_id: row.id }, { key: publishJobKey(row.id), runAt: publishAt, maxAttempts: 10 });
    await recordActivity(tx, actor, {
      resource: 'blog',
      resourceId: slug,
      action: 'status_changed',
      summary: `scheduled "${row.title}" for ${toIso(scheduled.publishAt)}`,
      changes: { status: [row.status, 'scheduled'], publish_at: [toIso(row.publishAt), toIso(scheduled.publishAt)] },
    });
    return toPost(scheduled);
  });
}

async function slugTaken(db: Queryable, slug: string): Promise<boolean> {
  if (RESERVED_SLUGS.has(slug)) return true;
  const [row] = await db.select({ id: blogPosts.id }).from(blogPosts).where(eq(blogPosts.slug, slug)).limit(1);
  return Boolean(row);
}

/** Reads a post and locks its row until the transaction ends, so concurrent moves of one post serialize. */
async function lockPost(tx: Tx, slug: string): Promise<PostRow> {
  const [row] = await tx.select().from(blogPosts).where(eq(blogPosts.slug, slug)).limit(1).for('update');
  if (!row) throw contentErrors.notFound('blog post', slug);
  return row;
}
