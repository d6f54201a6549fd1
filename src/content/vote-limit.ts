/**
 * Votes need no secret (spec 5.2), so nothing stops one address from casting votes under any number of
 * `voter_id`s. Each address may cast or withdraw at most `CONTENT_VOTES_PER_MINUTE` votes a minute
 * (default 30): far more than a person clicks, far fewer than a script stuffing a ballot. Counted in the
 * database so every process shares the count (DESIGN 6); the address is the socket's unless `TRUST_PROXY`
 * names the proxy in front. Refused with 429 `rate_limited` and `Retry-After`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { countAttempt } from '../platform/rate-limit.js';
import type { ContentContext } from './context.js';
import { platformErrors } from '../platform/errors.js';

export const DEFAULT_VOTES_PER_MINUTE = 30;

/** Counts one vote (cast or withdrawn) from the request's address; throws `rate_limited` past the limit. */
export async function checkVoteRate(ctx: ContentContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const limit = ctx.config.votesPerMinute ?? DEFAULT_VOTES_PER_MINUTE;
  const outcome = await countAttempt(ctx.db, `vote:${request.ip}`, { limit, windowSeconds: 60 });
  if (outcome.allowed) return;
  reply.header('retry-after', String(outcome.retryAfter));
  throw platformErrors.rateLimited(`too many votes from this address (at most ${limit} a minute); try again in ${outcome.retryAfter} seconds`);
}
