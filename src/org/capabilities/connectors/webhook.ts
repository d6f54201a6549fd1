/**
 * The `webhook` connector (DESIGN 4.2): POSTs `{type: "capability", operation_id, decision_id, capability,
 * agent, space_id, input}` to the capability's URL, signed (`whsec_…`, Standard Webhooks) with the secret named by
 * `secret_env` when the connector names one (the file's way), else with the one the server generated when the
 * capability was made on the console, else unsigned. A 2xx answer is the operation's result `{status, body}`.
 */
import { Webhook } from 'standardwebhooks';
import { failure, type RunnerOutcome } from '../../operations/operations.js';
import { describeRefusal, isSuccess, parseAnswer, postSigned } from '../../../platform/outbound.js';
import { CONNECTOR_RETRY_WINDOW_MS, CONNECTOR_TIMEOUT_MS, type ConnectorCall } from './call.js';

type WebhookConnector = { url: string; secret_env?: string };

/** The secret that signs the call: `secret_env`'s value when named, else the generated one (null: unsigned). */
function signingSecretOf(connector: WebhookConnector, generated: string | null): string | undefined {
  return connector.secret_env ? process.env[connector.secret_env] : (generated ?? undefined);
}

export async function runWebhook(connector: WebhookConnector, generatedSecret: string | null, call: ConnectorCall): Promise<RunnerOutcome> {
  const body = JSON.stringify({
    type: 'capability',
    operation_id: call.operationId,
    decision_id: call.decisionId,
    capability: call.capability,
    agent: { id: call.agent.id, key: call.agent.key },
    space_id: call.spaceId,
    input: call.input,
  });
  const problem = webhookProblem(connector);
  if (problem) return { status: 'failed', error: failure('connector_failed', problem) };
  const secret = signingSecretOf(connector, generatedSecret);
  const deadline = Date.now() + CONNECTOR_RETRY_WINDOW_MS;
  for (;;) {
    // The action is sent once: every outcome but a 429 or 503 naming when to come back ends the run here.
    const outcome = await postSigned({ url: connector.url, secret, webhookId: call.operationId, body, timeoutMs: CONNECTOR_TIMEOUT_MS });
    if (outcome.kind === 'failed') return { status: 'failed', error: failure('connector_failed', `the webhook ${outcome.reason}`) };
    if (isSuccess(outcome.status)) return { status: 'succeeded', result: { status: outcome.status, body: parseAnswer(outcome.text) } };
    const retryAt = outcome.retryAfterMs === undefined ? undefined : Date.now() + outcome.retryAfterMs;
    if (retryAt === undefined || retryAt > deadline) return { status: 'failed', error: failure('connector_failed', describeRefusal('the webhook', outcome)) };
    await new Promise((resolve) => setTimeout(resolve, retryAt - Date.now()));
  }
}

/** Why this webhook connector cannot run as configured — a URL that is not http(s), a secret unset or invalid — or undefined. */
export function webhookProblem(connector: WebhookConnector): string | undefined {
  let url: URL | undefined;
  try {
    url = new URL(connector.url);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol)) return `the webhook URL ${JSON.stringify(connector.url.slice(0, 200))} is not an http or https URL`;
  if (!connector.secret_env) return undefined;
  const secret = process.env[connector.secret_env];
  if (!secret) return `${connector.secret_env} is not set, so the webhook cannot be signed`;
  try {
    new Webhook(secret);
  } catch {
    return `${connector.secret_env} is not a valid whsec_ secret`;
  }
  return undefined;
}
