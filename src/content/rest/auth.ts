/**
 * Spec 5.2: drafts, preview, the activity log and every write except voting need
 * `Authorization: Bearer <CONTENT_API_SECRET>`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpServer } from '../../platform/http.js';
import type { ContentContext } from '../context.js';
import { contentErrors } from '../errors.js';

/** Compares digests so the comparison takes the same time whatever the length or content of the guess. */
function isContentSecret(ctx: ContentContext, authorization: string | undefined): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return false;
  return timingSafeEqual(sha256(match[1]), secretDigest(ctx.apiSecret));
}

/**
 * Every request is checked by the no-store hook and again by its route or the MCP endpoint; the verdict is
 * kept with the request, so the presented secret is hashed once.
 */
const verdicts = new WeakMap<FastifyRequest, boolean>();

export function isAuthenticated(ctx: ContentContext, request: FastifyRequest): boolean {
  // Most requests (the public site's) carry no credentials: nothing to hash or keep.
  if (request.headers.authorization === undefined) return false;
  let verdict = verdicts.get(request);
  if (verdict === undefined) verdicts.set(request, (verdict = isContentSecret(ctx, request.headers.authorization)));
  return verdict;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest();

/** The secret's digest, worked out once per secret rather than once per request. */
let known: { secret: string; digest: Buffer } | undefined;

function secretDigest(secret: string): Buffer {
  if (known?.secret !== secret) known = { secret, digest: sha256(secret) };
  return known.digest;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `'secret'`: the route needs the bearer secret (spec 5.2); the OpenAPI document marks it too (openapi.ts). */
    auth?: 'secret';
  }
}

/** Route config of a protected route. */
export const SECRET_REQUIRED = { auth: 'secret' } as const;

/**
 * Refuses requests to routes marked `config: { auth: 'secret' }` without the secret. An `onRequest` hook, so
 * it runs before the body is read; registered before any route, so it runs before the routes' own hooks.
 */
export function registerSecretCheck(app: HttpServer, ctx: ContentContext): void {
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.auth === 'secret' && !isAuthenticated(ctx, request)) throw contentErrors.unauthorized();
  });
}

/**
 * An `onRequest` hook for the whole service: a response to the secret's holder (drafts, previews, the
 * activity log, all roadmap items, MCP) may hold unpublished text, so no cache may store it (RFC 9111
 * §5.2.2.5). Routes that set their own Cache-Control (public assets) keep theirs.
 */
export function noStoreWhenAuthenticated(ctx: ContentContext) {
  return async function noStore(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (isAuthenticated(ctx, request)) reply.header('cache-control', 'no-store');
  };
}
