/**
 * One attempt at a signed delivery — work to an agent's webhook (DESIGN 4.5) or an organization event to an endpoint
 * (DESIGN 4.8): a JSON POST signed by the Standard Webhooks convention through the one outbound poster
 * (platform/outbound.ts: no redirects, at most 1 MiB of answer, one deadline), what the receiver's answer means, and
 * when to try again.
 */
import { describeRefusal, isSuccess, postSigned, quoteAnswer, type OutboundResult } from '../../platform/outbound.js';

export interface SignedDelivery {
  /** Who receives it, as failures name it: "the agent", "the endpoint". */
  receiver: string;
  url: string;
  /** `whsec_…` */
  secret: string;
  /** The same for every attempt of one delivery, so the receiver can drop repeats. */
  webhookId: string;
  body: Record<string, unknown>;
  timeoutMs: number;
}

/** What an attempt came to; `status` is the HTTP status of the agent's answer, when it answered. */
export type AttemptOutcome = { status?: number } & (
  /** 200 with `{result}`: the agent answered at once. */
  | { kind: 'answered'; result: unknown }
  /** 202 (or any other 2xx): the agent took the work and reports through the agent API. */
  | { kind: 'accepted' }
  /**
   * A network error, a timeout, an answer too large, 408, 429 or 5xx: worth another attempt, not before
   * `retryAfterMs` when the agent said so (`Retry-After` on 429 and 503).
   */
  | { kind: 'retry'; reason: string; retryAfterMs?: number }
  /** Any other answer (a redirect among them): the agent will not take it, and asking again changes nothing. */
  | { kind: 'refused'; reason: string }
);

export async function deliverSigned(delivery: SignedDelivery): Promise<AttemptOutcome> {
  let outcome: OutboundResult;
  try {
    outcome = await postSigned({ ...delivery, body: JSON.stringify(delivery.body) });
  } catch {
    return { kind: 'refused', reason: 'the signing secret is not a valid whsec_ secret' };
  }
  return attemptOutcome(outcome, delivery.receiver);
}

/**
 * When to try again after a `retry` outcome: at the time `Retry-After` names (429, 503), or else after the backoff
 * of the `attempts`-th failure; never past `deadline` (the end of the retry window, ms since the epoch).
 */
export function nextAttemptAt(outcome: { retryAfterMs?: number }, attempts: number, policy: { deadline: number; maxBackoffSeconds: number }): Date {
  const wait = outcome.retryAfterMs ?? backoffSeconds(attempts, policy.maxBackoffSeconds) * 1000;
  return new Date(Math.min(Date.now() + wait, policy.deadline));
}

/** Seconds to wait after the `attempts`-th attempt failed: 1, 2, 4, … capped at `maxSeconds`. */
export function backoffSeconds(attempts: number, maxSeconds: number): number {
  return Math.min(2 ** Math.max(attempts - 1, 0), maxSeconds);
}

function attemptOutcome(outcome: OutboundResult, receiver: string): AttemptOutcome {
  if (outcome.kind === 'failed') return { kind: 'retry', reason: `${receiver} ${outcome.reason}` };
  const { status } = outcome;
  if (status === 200) {
    const answer = parseObject(outcome.text);
    if (answer && 'result' in answer) return { kind: 'answered', status, result: answer.result };
    return { kind: 'accepted', status };
  }
  if (isSuccess(status)) return { kind: 'accepted', status };
  const reason = describeRefusal(receiver, outcome);
  if (status === 408 || status === 429 || status >= 500) return { kind: 'retry', status, reason, ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }) };
  if (status >= 300 && status < 400) return { kind: 'refused', status, reason };
  const quoted = quoteAnswer(outcome.text);
  return { kind: 'refused', status, reason: `${receiver} refused the delivery with HTTP ${status}${quoted ? `: ${quoted}` : ''}` };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
