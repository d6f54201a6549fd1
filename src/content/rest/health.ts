import { z } from 'zod';
import { ping } from '../../platform/database.js';
import type { HttpServer } from '../../platform/http.js';
import type { ContentContext } from '../context.js';

const healthBody = z.object({ ok: z.boolean(), service: z.string(), mcp: z.string() });

export function registerHealthRoutes(app: HttpServer, ctx: ContentContext): void {
  app.get(
    '/health',
    {
      schema: {
        tags: ['health'],
        summary: 'Service health, for load balancers and monitors',
        description: 'No authentication. 200 `{"ok": true}` when the database answers; 503 `{"ok": false}` when it does not. `mcp` is the path of the MCP endpoint.',
        response: { 200: healthBody, 503: healthBody },
      },
    },
    async (_request, reply) => {
      const ok = await ping(ctx.db);
      return reply.code(ok ? 200 : 503).send({ ok, service: 'atrium-content', mcp: '/mcp' });
    },
  );
}
