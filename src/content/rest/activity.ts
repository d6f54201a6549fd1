/** GET /activity (spec 4.4, 5.2): the content change log, oldest first, for holders of the secret. */
import type { HttpServer } from '../../platform/http.js';
import { activityPage, listActivity } from '../activity.js';
import { activityQuery } from '../contract.js';
import type { ContentContext } from '../context.js';
import { SECRET_REQUIRED } from './auth.js';

export function registerActivityRoutes(app: HttpServer, ctx: ContentContext): void {
  app.get(
    '/activity',
    {
      config: SECRET_REQUIRED,
      schema: {
        tags: ['activity'],
        summary: 'The activity log, oldest first; page on with cursor = next_cursor (auth required)',
        querystring: activityQuery,
        response: { 200: activityPage },
      },
    },
    async (request) => listActivity(ctx.db, request.query, 'oldest_first'),
  );
}
