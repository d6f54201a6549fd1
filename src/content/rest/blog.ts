/**
 * Blog routes of spec 4.4 (auth per 5.2): thin adapters that parse, call content/blog/ and answer.
 * Every write needs the bearer secret and carries actor_id/actor_type in its JSON body (DELETE too).
 */
import { z } from 'zod';
import type { HttpServer } from '../../platform/http.js';
import { actorFields, takeActor } from '../actor.js';
import { getPost, listDraftPosts, listDraftPostsInput, listPublishedPosts } from '../blog/queries.js';
import { blogPost, postPage } from '../blog/records.js';
import {
  approvePost,
  archivePost,
  createPost,
  deletePost,
  publishPost,
  schedulePost,
  schedulePostInput,
  submitPost,
  updatePost,
} from '../blog/workflow.js';
import { createPostInput, listPostsInput, updatePostInput } from '../contract.js';
import type { ContentContext } from '../context.js';
import { contentErrors } from '../errors.js';
import { queryBoolean } from '../fields.js';
import { isAuthenticated, SECRET_REQUIRED } from './auth.js';

const tags = ['blog'];
const params = z.object({ slug: z.string().min(1).max(200) });
const actorBody = z.strictObject(actorFields);

export function registerBlogRoutes(app: HttpServer, ctx: ContentContext): void {
  app.get(
    '/blog',
    {
      config: { publicCache: true },
      schema: { tags, summary: 'List published posts, newest first', querystring: listPostsInput, response: { 200: postPage } },
    },
    async (request) => listPublishedPosts(ctx, request.query),
  );

  // Before /blog/:slug, so "drafts" is never taken for a slug.
  app.get(
    '/blog/drafts',
    {
      config: SECRET_REQUIRED,
      schema: {
        tags,
        summary: 'List unpublished posts: draft, review and scheduled (auth required)',
        querystring: listDraftPostsInput,
        response: { 200: postPage },
      },
    },
    async (request) => listDraftPosts(ctx, request.query),
  );

  app.get(
    '/blog/:slug',
    {
      config: { publicCache: true },
      schema: {
        tags,
        summary: 'Get one published post; preview=true (auth required) shows a post in any state',
        params,
        querystring: z.strictObject({ preview: queryBoolean.optional() }),
        response: { 200: blogPost },
      },
    },
    async (request) => {
      const preview = request.query.preview === true;
      // Spec 5.2: preview mode needs the secret even though the route is otherwise public.
      if (preview && !isAuthenticated(ctx, request)) throw contentErrors.unauthorized();
      return getPost(ctx, request.params.slug, { include_drafts: preview });
    },
  );

  app.post(
    '/blog',
    {
      config: SECRET_REQUIRED,
      schema: { tags, summary: 'Create a post (draft by default, or published)', body: createPostInput.extend(actorFields), response: { 201: blogPost } },
    },
    async (request, reply) => {
      const [actor, input] = takeActor(request.body);
      return reply.code(201).send(await createPost(ctx, input, actor));
    },
  );

  app.patch(
    '/blog/:slug',
    {
      config: SECRET_REQUIRED,
      schema: { tags, summary: 'Update a post; updating a published post revalidates its pages', params, body: updatePostInput.extend(actorFields), response: { 200: blogPost } },
    },
    async (request) => {
      const [actor, input] = takeActor(request.body);
      return updatePost(ctx, request.params.slug, input, actor);
    },
  );

  const moves = [
    ['submit', 'Submit a draft for review (422 validation_failed lists every failing field)', submitPost],
    ['approve', 'Approve a post in review: it is published', approvePost],
    ['publish', 'Publish a post in any state, skipping review', publishPost],
    ['archive', 'Archive a published post', archivePost],
  ] as const;
  for (const [move, summary, run] of moves) {
    app.post(
      `/blog/:slug/${move}`,
      { config: SECRET_REQUIRED, schema: { tags, summary, params, body: actorBody, response: { 200: blogPost } } },
      async (request) => run(ctx, request.params.slug, request.body),
    );
  }

  app.post(
    '/blog/:slug/schedule',
    {
      config: SECRET_REQUIRED,
      schema: {
        tags,
        summary: 'Schedule a draft or a post in review to publish itself at publish_at, once',
        params,
        body: schedulePostInput.extend(actorFields),
        response: { 200: blogPost },
      },
    },
    async (request) => {
      const [actor, input] = takeActor(request.body);
      return schedulePost(ctx, request.params.slug, input, actor);
    },
  );

  app.delete(
    '/blog/:slug',
    {
      config: SECRET_REQUIRED,
      schema: {
        tags,
        summary: 'Delete a draft for good; any other status is refused',
        params,
        body: actorBody,
        response: { 200: z.object({ slug: z.string(), deleted: z.literal(true) }) },
      },
    },
    async (request) => deletePost(ctx, request.params.slug, request.body),
  );
}
