/**
 * Connectors (DESIGN 4.2): how an allowed capability reaches the world. `webhook` POSTs the action, signed
 * by the Standard Webhooks convention; `content` calls the content REST API with the content secret. A
 * refusal or an unreachable service fails the operation with `connector_failed` at once, naming what the
 * receiver said; the action is sent once (its webhook-id is the operation id, so a receiver can drop the repeat
 * that only a process dying mid-run causes). Both go through the outbound poster (platform/outbound.ts).
 */
import type { OrgContext } from '../../context.js';
import type { RunnerOutcome } from '../../operations/operations.js';
import { contentTarget, runContentAction } from './content.js';
import { runWebhook, webhookProblem } from './webhook.js';
import { type ConnectorJson } from '../../schema.js';
import { type ConnectorCall } from './call.js';

export type Connector = ConnectorJson;

/** A capability's connector and the signing secret the server generated for it (null when `secret_env` names one). */
export interface Connected {
  connector: Connector;
  signingSecret: string | null;
}

export function runConnector(ctx: OrgContext, { connector, signingSecret }: Connected, call: ConnectorCall): Promise<RunnerOutcome> {
  return connector.kind === 'webhook' ? runWebhook(connector, signingSecret, call) : runContentAction(ctx, connector, call);
}

/**
 * Why `connector` cannot run as configured (its secret unset or invalid, its URL not http(s), no content
 * service), or undefined. DESIGN 4.4: no person is asked to approve an action that cannot run — the operation
 * fails `connector_failed` before the gate opens a decision.
 */
export async function connectorProblem(ctx: OrgContext, connector: Connector): Promise<string | undefined> {
  if (connector.kind === 'webhook') return webhookProblem(connector);
  const target = await contentTarget(ctx);
  return 'problem' in target ? target.problem : undefined;
}
