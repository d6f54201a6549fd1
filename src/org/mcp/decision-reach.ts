/**
 * Decisions reach the person (issue 21 items 3 and 5, DESIGN 4.9): when an action pauses for a person, or
 * `resolve_decision` is handed to the browser by the organization's `decide_in_browser` setting, the client is
 * pointed at the decision's page on the org origin, where the person decides in their own browser session — the
 * AI client never holds the decision.
 *
 * - Every paused operation a tool returns carries `decision_url` beside `decision_id` (older clients read it there).
 * - A `2025-11-25` client that declared URL-mode elicitation (`capabilities.elicitation.url`, 2025-11-25
 *   client/elicitation "Capabilities") is answered the `URLElicitationRequiredError` (JSON-RPC -32042) naming
 *   the page, its `elicitationId` the decision id, by the tool that paused (not by get_operation, which only
 *   reports). Why the error and not an `elicitation/create` request: each request here is served by a fresh,
 *   stateless server on whichever process takes it, so a server→client request could not be answered back to the
 *   call that sent it (the client's answer is a new POST, perhaps to another process). The error needs no answer:
 *   the operation stays paused in the database and the client retries the call with the same `idempotency_key`
 *   (or polls get_operation) once the person decided — the "URL Mode With Elicitation Required Error Flow".
 * - `notifications/elicitation/complete` is not sent: it would have to reach the client's GET stream, held by
 *   whichever process it opened on, and nothing here routes a message across processes to it. The spec makes it
 *   optional (MAY) and clients must offer a manual retry without it.
 */
import { UrlElicitationRequiredError, type CallToolResult } from '@modelcontextprotocol/server';
import type { McpClient } from '../../platform/mcp/endpoint.js';
import { decisionPageUrl } from '../decisions/page-url.js';

/** The revision whose clients may declare URL-mode elicitation and be answered -32042. */
const URL_ELICITATION_REVISION = '2025-11-25';

/** Whether the client said it opens URLs for the person (2025-11-25 client/elicitation, "Capabilities"). */
export function takesUrlElicitation(client: McpClient): boolean {
  const elicitation = client.capabilities.elicitation;
  return client.protocolVersion === URL_ELICITATION_REVISION && isObject(elicitation) && isObject(elicitation.url);
}

/**
 * A tool's result on its way to the client: a paused operation gains its `decision_url`, and a client taking
 * URL-mode elicitation is asked to open the page instead — for a call that started or resolved the action
 * (`acted`), not for a read of it.
 */
export function reachThePerson(result: CallToolResult, { client, origin, acted }: { client: McpClient; origin: string; acted: boolean }): CallToolResult {
  const urlMode = acted && takesUrlElicitation(client);
  if (result.isError) {
    const refusal = refusalOf(result);
    if (urlMode && refusal?.code === 'decide_in_browser' && typeof refusal.details?.decision_id === 'string') {
      throw openDecisionPage(refusal.details.decision_id, String(refusal.details.decision_url), refusal.message);
    }
    return result;
  }
  const operation = result.structuredContent;
  if (!isObject(operation) || operation.status !== 'paused' || typeof operation.decision_id !== 'string') return result;
  const decisionUrl = decisionPageUrl(origin, operation.decision_id);
  if (urlMode) {
    throw openDecisionPage(
      operation.decision_id,
      decisionUrl,
      `This action waits for a person's decision: open the page to approve or deny it. Then call get_operation with ` +
        `operation_id ${String(operation.operation_id)} (or retry with the same idempotency_key) for the outcome.`,
    );
  }
  const withUrl = { ...operation, decision_url: decisionUrl };
  return { ...result, content: [{ type: 'text', text: JSON.stringify(withUrl) }], structuredContent: withUrl };
}

function openDecisionPage(decisionId: string, url: string, message: string): UrlElicitationRequiredError {
  return new UrlElicitationRequiredError([{ mode: 'url', elicitationId: decisionId, url, message }], message);
}

/** The catalogued refusal an error result holds (platform/mcp/tools.ts writes it as the one text content). */
function refusalOf(result: CallToolResult): { code: string; message: string; details?: Record<string, unknown> } | undefined {
  const [content] = result.content;
  if (content?.type !== 'text') return undefined;
  try {
    const body = JSON.parse(content.text) as { error?: { code: string; message: string; details?: Record<string, unknown> } };
    return body.error;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
