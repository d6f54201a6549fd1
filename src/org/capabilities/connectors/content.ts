/**
 * The `content` connector (DESIGN 4.2): runs a content action through the content REST API (interface C)
 * with `Authorization: Bearer <CONTENT_API_SECRET>` — the configured secret, or the one the content service
 * generated in the shared data dir on its first start. The write is recorded as the acting agent
 * (`actor_type: agent`). The content's answer is the operation's result.
 */
import { CONTENT_SECRET_NAME, readStoredSecret } from '../../../platform/secrets.js';
import type { OrgContext } from '../../context.js';
import { failure, type RunnerOutcome } from '../../operations/operations.js';
import { contentRequest } from '../../../content/contract.js';
import { describeRefusal, isSuccess, parseAnswer, sendOutbound } from '../../../platform/outbound.js';
import { CONNECTOR_TIMEOUT_MS, type ConnectorCall } from './call.js';

export async function runContentAction(ctx: OrgContext, connector: { action: string }, call: ConnectorCall): Promise<RunnerOutcome> {
  const target = await contentTarget(ctx);
  if ('problem' in target) return { status: 'failed', error: failure('connector_failed', target.problem) };
  const { base, secret } = target;
  const request = contentRequest(connector.action, call.input);
  const outcome = await sendOutbound({
    url: base + request.path,
    method: request.method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({ ...request.body, actor_id: call.agent.key ?? call.agent.name, actor_type: 'agent' }),
    timeoutMs: CONNECTOR_TIMEOUT_MS,
  });
  if (outcome.kind === 'failed') return { status: 'failed', error: failure('connector_failed', `the content service ${outcome.reason}`) };
  if (!isSuccess(outcome.status)) return { status: 'failed', error: failure('connector_failed', describeRefusal('the content service', outcome)) };
  return { status: 'succeeded', result: parseAnswer(outcome.text) };
}

/** Where the content service is and its secret, or why the content connector cannot run. */
export async function contentTarget(ctx: OrgContext): Promise<{ base: string; secret: string } | { problem: string }> {
  const base = ctx.config.content?.url;
  if (!base) return { problem: 'no content service is configured (CONTENT_PUBLIC_URL)' };
  const secret = ctx.config.content?.apiSecret ?? (await readStoredSecret(ctx.config.dataDir, CONTENT_SECRET_NAME));
  if (!secret) return { problem: 'the content secret is unknown: set CONTENT_API_SECRET or start the content service once' };
  return { base, secret };
}
