/**
 * Connectors (DESIGN 4.2): how an allowed capability reaches the world. `webhook` POSTs the action, signed
 * by the Standard Webhooks convention; `content` calls the content REST API with the content secret. A
 * refusal or an unreachable service fails the operation with `connector_failed`; the action is sent once
 * (its webhook-id is the operation id, so a receiver can drop a repeat after a crash).
 */
import type { OrgContext } from '../context.js';
import type { RunnerOutcome } from '../operations/operations.js';
import { contentTarget, runContentAction } from './content.js';
import { runWebhook, webhookProblem } from './webhook.js';

export type Connector = { kind: 'webhook'; url: string; secret_env?: string } | { kind: 'content'; action: string };

/** What a connector is asked to do. */
export interface ConnectorCall {
  operationId: string;
  decisionId: string | null;
  capability: { id: string; key: string };
  agent: { id: string; key: string | null; name: string };
  spaceId: string | null;
  input: unknown;
}

/** Connectors wait this long for an answer. */
export const CONNECTOR_TIMEOUT_MS = 10_000;

export function runConnector(ctx: OrgContext, connector: Connector, call: ConnectorCall): Promise<RunnerOutcome> {
  return connector.kind === 'webhook' ? runWebhook(connector, call) : runContentAction(ctx, connector, call);
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

/** The answer's JSON, or its text when it is not JSON, or null when empty. */
export async function readAnswer(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text.slice(0, 2000);
  }
}
