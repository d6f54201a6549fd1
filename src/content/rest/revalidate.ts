/**
 * POST /revalidate (spec 4.4; DESIGN 3): asks the rendered site to rebuild the pages of one piece of
 * content. The request is queued and sent in the background with retries, so the answer is 202 at once
 * whether or not the site is up; `configured: false` says REVALIDATE_URL is unset and nothing will be sent.
 * It changes no content, so it is not an activity-log entry; the job worker logs each outcome.
 */
import { z } from 'zod';
import type { HttpServer } from '../../platform/http.js';
import { actorFields } from '../actor.js';
import type { ContentContext } from '../context.js';
import { requestRevalidation } from '../revalidation.js';
import { slugSchema } from '../fields.js';
import { SECRET_REQUIRED } from './auth.js';

const revalidateBody = z.strictObject({
  type: z.enum(['blog', 'changelog', 'roadmap']),
  slug: slugSchema.describe('the content whose pages to rebuild; need not exist any more'),
  ...actorFields,
});

const queued = z.object({
  queued: z.literal(true),
  type: z.enum(['blog', 'changelog', 'roadmap']),
  slug: z.string(),
  paths: z.array(z.string()),
  configured: z.boolean(),
});

export function registerRevalidateRoutes(app: HttpServer, ctx: ContentContext): void {
  app.post(
    '/revalidate',
    {
      config: SECRET_REQUIRED,
      schema: { tags: ['revalidate'], summary: 'Queue a rebuild of the pages showing one piece of content', body: revalidateBody, response: { 202: queued } },
    },
    async (request, reply) => {
      const { type, slug, actor_id, actor_type } = request.body;
      const queuedRequest = await requestRevalidation(ctx, ctx.db, { type, slug });
      ctx.jobs.wake();
      request.log.info({ revalidate: { type, slug }, actor: { actor_id, actor_type } }, 'revalidation requested');
      return reply.code(202).send({ queued: true as const, type, slug, paths: queuedRequest.paths, configured: queuedRequest.configured });
    },
  );
}
