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
 * - A `2026-07-28` client that declared it (in its request's `_meta` capabilities) gets an `input_required` result
 *   (basic/patterns/mrtr) whose one input request is that URL elicitation, keyed by the decision id, and whose
 *   `requestState` names the operation. Its retry (after the person was shown the page) is answered with the
 *   operation as it then stands, as get_operation would — never by running the tool again, so an action without an
 *   idempotency key is not asked for twice. The state is not signed: all it can name is an operation, which is read
 *   only when it is the caller's own (get_operation's rule), so a forged state reveals nothing more.
 * - `notifications/elicitation/complete` is not sent: it would have to reach the client's GET stream, held by
 *   whichever process it opened on, and nothing here routes a message across processes to it. The spec makes it
 *   optional (MAY) and clients must offer a manual retry without it; 2026-07-28 removed it.
 */
import { inputRequired, UrlElicitationRequiredError, type CallToolRequestParams, type CallToolResult, type InputRequiredResult } from '@modelcontextprotocol/server';
import type { McpClient } from '../../platform/mcp/endpoint.js';
import { decisionPageUrl } from '../decisions/page-url.js';
import type { OrgMcpCall, OrgToolRegistry } from './tools.js';

/** How each revision asks a client to open a URL: the -32042 error, or an input request of an `input_required` result. */
const URL_REQUEST_BY_REVISION: Record<string, 'error' | 'input_required'> = { '2025-11-25': 'error', '2026-07-28': 'input_required' };

/** What a 2026-07-28 retry's `requestState` starts with: the operation the input request was about. */
const OPERATION_STATE = 'operation:';

/** Whether the client said it opens URLs for the person (client/elicitation, "Capabilities": `elicitation.url`). */
export function takesUrlElicitation(client: McpClient): boolean {
  const elicitation = client.capabilities.elicitation;
  return isObject(elicitation) && isObject(elicitation.url);
}

/** How the client takes a URL request, if it takes them at all. */
function urlRequestOf(client: McpClient): 'error' | 'input_required' | undefined {
  return takesUrlElicitation(client) ? URL_REQUEST_BY_REVISION[client.protocolVersion] : undefined;
}

export interface Reach {
  client: McpClient;
  /** The org origin the decision page is on (ORG_PUBLIC_URL). */
  origin: string;
  /** A 2026-07-28 retry's `requestState`, as the client echoed it. */
  requestState?: string;
}

/**
 * `tools/call` on the org registry with the decision page brought to the person: a 2026-07-28 retry after a URL
 * input request reads its operation; anything else runs the tool and goes through `reachThePerson`.
 */
export async function callToolReachingThePerson(registry: OrgToolRegistry, params: CallToolRequestParams, call: OrgMcpCall, reach: Reach): Promise<CallToolResult | InputRequiredResult> {
  if (reach.requestState?.startsWith(OPERATION_STATE)) {
    const operationId = reach.requestState.slice(OPERATION_STATE.length);
    return reachThePerson(await registry.call('get_operation', { operation_id: operationId }, call), { ...reach, acted: false });
  }
  const acted = registry.find(params.name)?.annotations.readOnlyHint === false;
  return reachThePerson(await registry.call(params.name, params.arguments, call), { ...reach, acted: acted && reach.requestState === undefined });
}

/**
 * A tool's result on its way to the client: a paused operation gains its `decision_url`, and a client taking
 * URL-mode elicitation is asked to open the page instead — for a call that started or resolved the action
 * (`acted`), not for a read of it.
 */
function reachThePerson(result: CallToolResult, { client, origin, acted }: Reach & { acted: boolean }): CallToolResult | InputRequiredResult {
  const urlRequest = acted ? urlRequestOf(client) : undefined;
  if (result.isError) {
    const refusal = refusalOf(result);
    if (urlRequest && refusal?.code === 'decide_in_browser' && typeof refusal.details?.decision_id === 'string') {
      return askToOpen(urlRequest, { decisionId: refusal.details.decision_id, url: String(refusal.details.decision_url), message: refusal.message });
    }
    return result;
  }
  const operation = result.structuredContent;
  if (!isObject(operation) || operation.status !== 'paused' || typeof operation.decision_id !== 'string') return result;
  const decisionUrl = decisionPageUrl(origin, operation.decision_id);
  if (urlRequest) {
    const message =
      `This action waits for a person's decision: open the page to approve or deny it. Then call get_operation with ` +
      `operation_id ${String(operation.operation_id)} (or retry with the same idempotency_key) for the outcome.`;
    return askToOpen(urlRequest, { decisionId: operation.decision_id, url: decisionUrl, message, operationId: String(operation.operation_id) });
  }
  const withUrl = { ...operation, decision_url: decisionUrl };
  return { ...result, content: [{ type: 'text', text: JSON.stringify(withUrl) }], structuredContent: withUrl };
}

/**
 * The URL request in the client's revision. A 2026-07-28 retry after a refused resolve_decision (no operation
 * named) runs the tool again: the refusal, or the decision's new state, is then its answer.
 */
function askToOpen(how: 'error' | 'input_required', page: { decisionId: string; url: string; message: string; operationId?: string }): InputRequiredResult {
  if (how === 'error') throw openDecisionPage(page.decisionId, page.url, page.message);
  return inputRequired({
    inputRequests: { [page.decisionId]: inputRequired.elicitUrl({ url: page.url, message: page.message }) },
    requestState: page.operationId ? `${OPERATION_STATE}${page.operationId}` : `decision:${page.decisionId}`,
  });
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
