/**
 * The pages' static files, served from this origin (no CDN): Pico's classless stylesheet from its npm
 * package, the console's own stylesheet, its one enhancement script and the service's icon. Read once at start and kept in
 * memory; each is named by a hash of its bytes in its ETag and cached for a day.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';

const require = createRequire(import.meta.url);

const FILES = {
  'pico.css': { file: () => require.resolve('@picocss/pico/css/pico.classless.min.css'), type: 'text/css; charset=utf-8' },
  'console.css': { file: () => new URL('./assets/console.css', import.meta.url).pathname, type: 'text/css; charset=utf-8' },
  'console.js': { file: () => new URL('./assets/console.js', import.meta.url).pathname, type: 'text/javascript; charset=utf-8' },
  // The service's icon, which MCP clients show beside the server and its tools (org/mcp/presentation.ts); the
  // PNG is the SVG rendered at 128 px, for clients that draw no SVG.
  'atrium.svg': { file: () => new URL('./assets/atrium.svg', import.meta.url).pathname, type: 'image/svg+xml' },
  'atrium.png': { file: () => new URL('./assets/atrium.png', import.meta.url).pathname, type: 'image/png' },
} as const;

export async function registerAssets(app: FastifyInstance): Promise<void> {
  for (const [name, { file, type }] of Object.entries(FILES)) {
    const body = await readFile(file());
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    app.get(`/assets/${name}`, async (request, reply) => {
      reply.header('cache-control', 'public, max-age=86400').header('etag', etag).type(type);
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.send(body);
    });
  }
}
