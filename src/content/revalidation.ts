/**
 * Page revalidation (DESIGN section 3): publishing, updating published content, shipping and
 * `POST /revalidate` ask the rendered site to rebuild its pages. The request is a durable job enqueued in
 * the write's transaction and sent afterwards with retries and backoff, so the site being slow or down
 * never blocks or fails a write. Outcomes are logged.
 */
import type { Queryable } from '../platform/database.js';
import { jobKind, type JobHandler } from '../platform/jobs.js';
import { isSuccess, sendOutbound } from '../platform/outbound.js';
import type { ContentContext } from './context.js';

export type RevalidationType = 'blog' | 'changelog' | 'roadmap';

export interface RevalidationTarget {
  type: RevalidationType;
  slug?: string;
}

export interface RevalidationRequest extends RevalidationTarget {
  paths: string[];
  /** False when REVALIDATE_URL is unset: the request is recorded but nothing is sent. */
  configured: boolean;
}

const SEND_TIMEOUT_MS = 5_000;

/** What the site is sent: the content's type and slug, and the pages that show it. */
type RevalidationPayload = { type: RevalidationType; slug: string | null; paths: string[] };
export const revalidation = jobKind<RevalidationPayload>('revalidate');

/** The rendered pages that show a piece of content: its list page and its own page. */
export function pagesOf(target: RevalidationTarget): string[] {
  const list = `/${target.type}`;
  return target.slug ? [list, `${list}/${target.slug}`] : [list];
}

/** Enqueue in the caller's transaction; call `ctx.jobs.wake()` after commit to send it promptly. */
export async function requestRevalidation(ctx: ContentContext, db: Queryable, target: RevalidationTarget): Promise<RevalidationRequest> {
  const paths = pagesOf(target);
  await revalidation.enqueue(db, { type: target.type, slug: target.slug ?? null, paths }, { maxAttempts: 6 });
  return { ...target, paths, configured: Boolean(ctx.config.revalidate.url) };
}

export function revalidateJob(ctx: ContentContext): JobHandler<RevalidationPayload> {
  return async (payload, job) => {
    const { url, secret } = ctx.config.revalidate;
    if (!url) {
      ctx.log.info({ revalidate: payload }, 'revalidation not configured (REVALIDATE_URL unset): skipped');
      return;
    }
    // Through the platform's poster: a redirect is never followed, the answer is read within bounds (and its
    // connection freed), and one deadline covers the whole exchange.
    const answer = await sendOutbound({
      url,
      headers: { 'content-type': 'application/json', ...(secret ? { authorization: `Bearer ${secret}` } : {}) },
      body: JSON.stringify(payload),
      timeoutMs: SEND_TIMEOUT_MS,
    });
    if (answer.kind === 'failed') throw new Error(`revalidation endpoint ${answer.reason}`);
    if (!isSuccess(answer.status)) throw new Error(`revalidation endpoint answered ${answer.status}`);
    ctx.log.info({ revalidate: payload, attempts: job.attempts }, 'revalidation sent');
  };
}
