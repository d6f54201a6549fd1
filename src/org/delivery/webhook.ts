/**
 * One attempt at delivering work to an agent's webhook (DESIGN 4.5): a JSON POST signed by the Standard
 * Webhooks convention (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of
 * id.timestamp.body>`) with the `standardwebhooks` package, and what the agent's answer means.
 */
import { Webhook } from 'standardwebhooks';

export interface SignedPost {
  url: string;
  /** `whsec_…` */
  secret: string;
  /** The same for every attempt of one delivery, so the agent can drop repeats. */
  webhookId: string;
  body: Record<string, unknown>;
  timeoutMs: number;
}

/** What an attempt came to. */
export type AttemptOutcome =
  /** 200 with `{result}`: the agent answered at once. */
  | { kind: 'answered'; result: unknown }
  /** 202 (or any other 2xx): the agent took the work and reports through the agent API. */
  | { kind: 'accepted' }
  /** A network error, a timeout, 408, 429 or 5xx: worth another attempt. */
  | { kind: 'retry'; reason: string }
  /** Any other answer: the agent will not take it, and asking again changes nothing. */
  | { kind: 'refused'; reason: string };

export async function postSigned(post: SignedPost): Promise<AttemptOutcome> {
  const payload = JSON.stringify(post.body);
  // Signed per attempt: receivers reject timestamps older than a few minutes (Standard Webhooks, "Verifying").
  const timestamp = new Date();
  let signature: string;
  try {
    signature = new Webhook(post.secret).sign(post.webhookId, timestamp, payload);
  } catch {
    return { kind: 'refused', reason: 'the signing secret is not a valid whsec_ secret' };
  }
  let response: Response;
  try {
    response = await fetch(post.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': post.webhookId,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body: payload,
      redirect: 'manual',
      signal: AbortSignal.timeout(post.timeoutMs),
    });
  } catch (error) {
    return { kind: 'retry', reason: describeNetworkError(error) };
  }
  const text = await response.text().catch(() => '');
  const { status } = response;
  if (status === 200) {
    const answer = parseObject(text);
    if (answer && 'result' in answer) return { kind: 'answered', result: answer.result };
    return { kind: 'accepted' };
  }
  if (status >= 200 && status < 300) return { kind: 'accepted' };
  if (status === 408 || status === 429 || status >= 500) return { kind: 'retry', reason: `the agent answered HTTP ${status}` };
  return { kind: 'refused', reason: `the agent refused the delivery with HTTP ${status}` };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function describeNetworkError(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'the agent did not answer in time';
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
  return `the agent could not be reached: ${cause}`;
}
