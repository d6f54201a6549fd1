/**
 * `GET /`: where to start. A browser is sent to the API reference; any other client gets the service's
 * entry points as JSON.
 */
import { z } from 'zod';
import type { HttpServer } from '../../platform/http.js';
import type { ContentContext } from '../context.js';
import { CONTENT_MCP_PATH } from '../mcp/server.js';

const landingBody = z.object({ service: z.string(), docs: z.string(), openapi: z.string(), mcp: z.string(), health: z.string() });

export function registerLandingRoute(app: HttpServer, ctx: ContentContext): void {
  app.get(
    '/',
    {
      schema: {
        tags: ['health'],
        summary: 'Where to start: the API reference, the OpenAPI document, the MCP endpoint',
        description: 'A browser (`Accept: text/html`) is redirected to `/docs`.',
        response: { 200: landingBody },
      },
    },
    async (request, reply) => {
      if (request.headers.accept?.includes('text/html')) return reply.redirect('/docs', 302);
      const base = ctx.config.publicUrl;
      return { service: 'atrium-content', docs: `${base}/docs`, openapi: `${base}/openapi.json`, mcp: `${base}${CONTENT_MCP_PATH}`, health: `${base}/health` };
    },
  );
}
