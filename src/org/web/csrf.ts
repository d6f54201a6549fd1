/**
 * CSRF tokens on every form (DESIGN 4.6), as OWASP's HMAC-based token pattern: a token is the HMAC of
 * what identifies the browser — its session when signed in, otherwise a random pre-session cookie (the
 * sign-in form) — under the shared key. A cross-site page can neither read the cookie nor compute the
 * HMAC, and a token taken from one browser is useless in another.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OrgContext } from '../context.js';
import { cookieName, cookieOptions, unsignedCookie, type Session } from './sessions.js';

const ANONYMOUS_COOKIE = 'atrium_csrf';

function sign(key: string, binding: string): string {
  return createHmac('sha256', key).update(`csrf|${binding}`).digest('base64url');
}

/** The token for a form on this page; sets the pre-session cookie when there is no session yet. */
export function issueCsrfToken(ctx: OrgContext, key: string, request: FastifyRequest, reply: FastifyReply, session: Session | null): string {
  if (session) return sign(key, `session:${session.id}`);
  let anonymous = unsignedCookie(request, cookieName(ctx, ANONYMOUS_COOKIE));
  if (!anonymous) {
    anonymous = randomBytes(32).toString('base64url');
    reply.setCookie(cookieName(ctx, ANONYMOUS_COOKIE), anonymous, cookieOptions(ctx));
  }
  return sign(key, `anonymous:${anonymous}`);
}

/** True when the submitted token matches this browser's session (or pre-session cookie). */
export function checkCsrfToken(
  ctx: OrgContext,
  key: string,
  request: FastifyRequest,
  session: Session | null,
  submitted: unknown,
): boolean {
  if (typeof submitted !== 'string' || !submitted) return false;
  const anonymous = unsignedCookie(request, cookieName(ctx, ANONYMOUS_COOKIE));
  const binding = session ? `session:${session.id}` : anonymous ? `anonymous:${anonymous}` : undefined;
  if (!binding) return false;
  const expected = Buffer.from(sign(key, binding));
  const given = Buffer.from(submitted);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
