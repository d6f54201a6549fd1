/**
 * The pages' static files, served from this origin (no CDN): Pico's classless stylesheet from its npm
 * package, the console's own stylesheet, its one enhancement script and the service's icon. Read once at start and kept in
 * memory; each is named by a hash of its bytes in its ETag. The pages link to `assetUrl(name)`, the path with that
 * hash as `?v=`, which a browser may keep for a year (`immutable`): a new version of the file is a new URL, so an
 * upgrade's stylesheet shows on the next page rather than a day later. Any other request for the file (no `v`, or
 * one from before an upgrade) is revalidated each time (`no-cache`, answered 304 while the ETag matches).
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

type AssetName = keyof typeof FILES;

/** Each file's hash, known once `registerAssets` has read it. */
const versions = new Map<AssetName, string>();

/** The path pages link to: with the file's hash once it is read, so that each version has its own URL. */
export function assetUrl(name: AssetName): string {
  const version = versions.get(name);
  return version === undefined ? `/assets/${name}` : `/assets/${name}?v=${version}`;
}

export async function registerAssets(app: FastifyInstance): Promise<void> {
  for (const [name, { file, type }] of Object.entries(FILES) as [AssetName, (typeof FILES)[AssetName]][]) {
    const body = await readFile(file());
    const version = createHash('sha256').update(body).digest('base64url').slice(0, 22);
    const etag = `"${version}"`;
    versions.set(name, version);
    app.get<{ Querystring: { v?: unknown } }>(`/assets/${name}`, async (request, reply) => {
      const current = request.query.v === version;
      reply.header('cache-control', current ? 'public, max-age=31536000, immutable' : 'no-cache').header('etag', etag).type(type);
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.send(body);
    });
  }
}
