/**
 * The org service's error catalogue: every refusal of an org tool (and of the agent API) has a stable code,
 * an HTTP status and a message. A tool's refusal travels as an `isError` result holding
 * `{"error": {code, message, details}}`, the shape of DESIGN 3; the one mapper that makes it is the MCP tool
 * registry's (platform/mcp/tools.ts), and REST routes send the same body with the status.
 *
 * OAuth and bearer refusals keep their RFC shapes (auth/errors.ts, mcp/bearer.ts). An operation that ends
 * badly is not a refusal: its `error` carries one of OPERATION_FAILURES.
 */
import { errorMaker, type ErrorCodes } from '../platform/errors.js';

/** Every code an org tool or the agent API refuses with, and its HTTP status (listed in the README). */
export const ORG_ERROR_CODES = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  no_space: 403,
  decide_in_browser: 403,
  not_found: 404,
  invalid_state: 409,
  idempotency_conflict: 409,
  agent_disabled: 409,
  agent_unreachable: 409,
  budget_exceeded: 500,
} as const satisfies ErrorCodes;

const orgError = errorMaker(ORG_ERROR_CODES);

export const orgErrors = {
  invalidRequest: (message: string, details?: Record<string, unknown>) => orgError('invalid_request', message, details),
  /**
   * One argument refused by a rule the input schema cannot check (it needs the database or the clock), in
   * the shape the registry gives schema refusals: the argument named in the message and in `details.issues`.
   */
  invalidArgument: (field: string, message: string) =>
    orgError('invalid_request', `invalid arguments: ${field}: ${message}`, { issues: [{ field, message }] }),
  /** The agent API without a valid callback token (RFC 6750 §3.1; the challenge is `WWW-Authenticate: Bearer`). */
  unauthorized: (message: string) => orgError('unauthorized', message),
  /** Allowed by scope, refused by a rule of the organization (self-approval, …). */
  forbidden: (message: string) => orgError('forbidden', message),
  /**
   * Issue 21 item 5: the organization wants a person to make this decision in their own browser, whatever scopes
   * the client holds; `details.decision_url` is its page.
   */
  decideInBrowser: (risk: string, decisionId: string, decisionUrl: string) =>
    orgError(
      'decide_in_browser',
      `the organization has a person decide ${risk}-risk actions in their browser, not through an AI client: ask them to open ${decisionUrl} and decide there (the decision stays pending until they do)`,
      { decision_id: decisionId, decision_url: decisionUrl },
    ),
  /** Spec 4.2 rule 2, DESIGN 4.3: with no space to place work in, the client must stop. */
  noSpace: () =>
    orgError('no_space', 'you belong to no space, so no work can be placed: stop here and ask the person to have an owner or admin add them to a space'),
  /** DESIGN 4.3: an id the caller may not see is reported exactly as one that does not exist. */
  notFound: (what: string) => orgError('not_found', `${what} not found`),
  /** A refused move of a state machine; the message names the current status. */
  invalidState: (message: string, details?: Record<string, unknown>) => orgError('invalid_state', message, details),
  /**
   * DESIGN 4.6: a record the organization file declares is changed in the file and applied, never on the console
   * (the next apply would undo it); `file` names the file when the caller knows it.
   */
  managedByFile: (what: string, file = 'the organization file (org.yaml)') =>
    orgError('invalid_state', `${what} is managed by ${file}: change it there and apply the file again (npx atrium org apply)`, { managed_by: 'file' }),
  /** DESIGN 4.3: the same idempotency key sent again with different arguments. */
  idempotencyConflict: () =>
    orgError('idempotency_conflict', 'this idempotency_key was already used with different arguments; use a new key for a new request'),
  /** DESIGN 4.4 hard deny: a disabled agent receives no work. */
  agentDisabled: (name: string) =>
    orgError('agent_disabled', `the agent ${name} is disabled, so it receives no work; ask its responsible person to enable it`),
  /**
   * DESIGN 4.5: only an agent with a webhook delivery (and its signing secret set) can be sent work; the
   * built-in assistant is asked with `ask`, and a connected client calls tools itself.
   */
  agentUnreachable: (message: string, details?: Record<string, unknown>) => orgError('agent_unreachable', message, details),
  /** Spec 7.1: HTTP 500 while the work goes on; the retry with the same key returns what it produced. */
  /** Spec 7.1's 25-second limit of a call; the wire code keeps the spec's word for it. */
  deadlinePassed: (seconds: number) =>
    orgError('budget_exceeded', `the tool ran past its ${seconds}-second deadline; its work may still finish: retry with the same idempotency_key`),
} as const;

/** The `error.code` of a failed operation (DESIGN 4.4, 4.5), beside codes of the catalogue above. */
export const OPERATION_FAILURES = {
  denied: 'a person denied the action',
  denied_by_rule: "the organization's rules deny this action",
  connector_failed: 'the connected service refused the action or could not be reached',
  expired: 'the decision expired before anyone resolved it',
  undeliverable: 'the agent could not be reached',
  agent_failed: 'the agent reported a failure',
  internal_error: 'the work failed inside the service',
} as const;

export type OperationFailure = keyof typeof OPERATION_FAILURES;
