/**
 * One attempt at delivering work to an agent's webhook (DESIGN 4.5): a JSON POST signed by the Standard
 * Webhooks convention through the one outbound poster (platform/outbound.ts: no redirects, at most 1 MiB of answer, one
 * deadline), and what the agent's answer means.
 */
import { describeRefusal, postSigned, quoteAnswer, type OutboundResult } from '../../platform/outbound.js';

export interface SignedDelivery {
  url: string;
  /** `whsec_…` */
  secret: string;
  /** The same for every attempt of one delivery, so the agent can drop repeats. */
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
  return attemptOutcome(outcome);
}

function attemptOutcome(outcome: OutboundResult): AttemptOutcome {
  if (outcome.kind === 'failed') return { kind: 'retry', reason: `the agent ${outcome.reason}` };
  const { status } = outcome;
  if (status === 200) {
    const answer = parseObject(outcome.text);
    if (answer && 'result' in answer) return { kind: 'answered', status, result: answer.result };
    return { kind: 'accepted', status };
  }
  if (status >= 200 && status < 300) return { kind: 'accepted', status };
  const reason = describeRefusal('the agent', outcome);
  if (status === 408 || status === 429 || status >= 500) return { kind: 'retry', status, reason, ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }) };
  if (status >= 300 && status < 400) return { kind: 'refused', status, reason };
  const quoted = quoteAnswer(outcome.text);
  return { kind: 'refused', status, reason: `the agent refused the delivery with HTTP ${status}${quoted ? `: ${quoted}` : ''}` };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
