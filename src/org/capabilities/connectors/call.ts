/** What a connector is asked to do, and how long it may take. */
/** What a connector is asked to do. */
export interface ConnectorCall {
  operationId: string;
  decisionId: string | null;
  capability: { id: string; key: string };
  agent: { id: string; key: string | null; name: string };
  spaceId: string | null;
  input: Record<string, unknown>;
}

/** Connectors wait this long for a whole answer. */
export const CONNECTOR_TIMEOUT_MS = 10_000;
/**
 * A receiver answering 429 or 503 with `Retry-After` is asked again, with the same webhook-id, when it says —
 * if that is within this window from the first call; otherwise the action fails `connector_failed`.
 */
export const CONNECTOR_RETRY_WINDOW_MS = 30_000;
