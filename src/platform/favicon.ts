/**
 * The Atrium mark (an open doorway under an arch) as an SVG favicon, served by both services at
 * `/favicon.svg`, with `/favicon.ico` (which browsers ask for unprompted) redirecting to it.
 */
import type { HttpServer } from './http.js';

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2a62b8"/><path d="M8 26V14a8 8 0 0 1 16 0v12h-5v-9a3 3 0 0 0-6 0v9z" fill="#fff"/></svg>`;

export function registerFavicon(app: HttpServer): void {
  app.get('/favicon.svg', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON_SVG),
  );
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/favicon.svg', 301));
}
