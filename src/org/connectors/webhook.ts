/**
 * The `webhook` connector (DESIGN 4.2): POSTs `{type: "capability", operation_id, decision_id, capability,
 * agent, space_id, input}` to the capability's URL, signed with the secret named by `secret_env`
 * (`whsec_…`, Standard Webhooks). A 2xx answer is the operation's result `{status, body}`.
 */
import { Webhook } from 'standardwebhooks';
import { failure, type RunnerOutcome } from '../operations/operations.js';
import { signWebhook } from '../delivery/sign.js';
import { CONNECTOR_TIMEOUT_MS, readAnswer, type ConnectorCall } from './index.js';

export async function runWebhook(connector: { url: string; secret_env?: string }, call: ConnectorCall): Promise<RunnerOutcome> {
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
  const signature = connector.secret_env ? signWebhook(process.env[connector.secret_env]!, call.operationId, body) : {};
  let response: Response;
  try {
    response = await fetch(connector.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signature },
      body,
      signal: AbortSignal.timeout(CONNECTOR_TIMEOUT_MS),
    });
  } catch (error) {
    return { status: 'failed', error: failure('connector_failed', `the webhook could not be reached: ${(error as Error).message}`) };
  }
  const answer = await readAnswer(response);
  if (!response.ok) return { status: 'failed', error: failure('connector_failed', `the webhook answered ${response.status}`) };
  return { status: 'succeeded', result: { status: response.status, body: answer } };
}

/** Why this webhook connector cannot run as configured — a URL that is not http(s), a secret unset or invalid — or undefined. */
export function webhookProblem(connector: { url: string; secret_env?: string }): string | undefined {
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
