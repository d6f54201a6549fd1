/** GET /activity (spec 4.4, 5.2): the content change log, oldest first, for holders of the secret. */
import { z } from 'zod';
import type { HttpServer } from '../../platform/http.js';
import { listActivity } from '../activity.js';
import type { ContentContext } from '../context.js';
import { isoDate, limitField } from '../fields.js';
import { ACTIVITY_ACTIONS, ACTIVITY_RESOURCES, ACTOR_TYPES } from '../schema.js';
import { requireSecret } from './auth.js';

const activityQuery = z.strictObject({
  resource: z.enum(ACTIVITY_RESOURCES).optional(),
  resource_id: z.string().min(1).max(200).optional().describe('the slug (or asset key) of one resource'),
  actor_type: z.enum(ACTOR_TYPES).optional(),
  action: z.enum(ACTIVITY_ACTIONS).optional(),
  after: isoDate.optional().describe('only entries strictly after this time'),
  before: isoDate.optional().describe('only entries strictly before this time'),
  limit: limitField(50, 200),
  cursor: isoDate.optional().describe('next_cursor of the previous page'),
});

const entry = z.object({
  id: z.string(),
  resource: z.string(),
  resource_id: z.string(),
  action: z.string(),
  actor_id: z.string(),
  actor_type: z.string(),
  summary: z.string(),
  changes: z.record(z.string(), z.tuple([z.unknown(), z.unknown()])).describe('{ field: [before, after] }'),
  created_at: z.string(),
});

export function registerActivityRoutes(app: HttpServer, ctx: ContentContext): void {
  app.get(
    '/activity',
    {
      onRequest: requireSecret(ctx),
      schema: {
        tags: ['activity'],
        summary: 'The activity log, oldest first; page on with cursor = next_cursor (auth required)',
        querystring: activityQuery,
        response: { 200: z.object({ entries: z.array(entry), next_cursor: z.string().nullable() }) },
      },
    },
    async (request) => listActivity(ctx.db, { ...request.query, order: 'oldest_first' }),
  );
}
