/**
 * GET /search (spec 4.4): public, answering from published posts and entries and public roadmap items.
 * `preview=true` with the secret searches drafts and non-public items too (as GET /blog/:slug?preview
 * does for one post), so a site that holds the secret for its server-side calls never leaks drafts into
 * its search box by accident.
 */
import { z } from 'zod';
import type { HttpServer } from '../../platform/http.js';
import type { ContentContext } from '../context.js';
import { contentErrors } from '../errors.js';
import { queryBoolean } from '../fields.js';
import { searchContent } from '../search.js';
import { SEARCH_TYPES, searchInput } from '../contract.js';
import { isAuthenticated } from './auth.js';

const result = z.object({
  slug: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  type: z.enum(SEARCH_TYPES),
  status: z.string().optional().describe('only in preview mode'),
});
const results = z.object({ results: z.object({ blog: z.array(result), changelog: z.array(result), roadmap: z.array(result) }) });

export function registerSearchRoutes(app: HttpServer, ctx: ContentContext): void {
  app.get(
    '/search',
    {
      config: { publicCache: true },
      schema: {
        tags: ['search'],
        summary: 'Find content by case-insensitive substring, grouped by type and limited per type',
        querystring: searchInput.extend({ preview: queryBoolean.optional().describe('auth required: include drafts and non-public items') }),
        response: { 200: results },
      },
    },
    async (request) => {
      const { preview, ...input } = request.query;
      if (preview && !isAuthenticated(ctx, request)) throw contentErrors.unauthorized();
      return searchContent(ctx, input, { includeHidden: preview === true });
    },
  );
}
