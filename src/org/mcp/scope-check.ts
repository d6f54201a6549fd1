/**
 * The per-tool scope check (DESIGN 4.3, spec 7.1): a `tools/call` whose token lacks the tool's scope is
 * refused at the HTTP level, before the MCP server runs, with 403 and the challenge of MCP authorization
 * 2026-07-28 (and 2025-11-25), "Runtime Insufficient Scope Errors":
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="<needed>", resource_metadata="…",
 * error_description="…"` (RFC 6750 §3.1, RFC 9728 §5.1), and a JSON body naming `required_scope`, so the client
 * can send the person back through authorize with that scope. Which scope a tool needs is data on the tool.
 */
import type { Scope } from '../../auth/index.js';

/** What a message (or batch) needs beyond the token: every missing scope, and the first tool that needs one. */
export interface MissingScope {
  tool: string;
  /** Each scope once, in the order the calls need them. */
  scopes: Scope[];
}

/**
 * The scopes the `tools/call`s in the message (or batch) need and the token lacks. Messages that are not tool
 * calls, unknown tools and tools open to any token pass: the MCP server answers those. MCP authorization
 * 2026-07-28: "servers SHOULD include all scopes required for the current operation in a single challenge",
 * so a batch is refused once, naming every scope its calls lack, rather than one per retry.
 */
export function findMissingScope(
  body: unknown,
  granted: readonly string[],
  scopeOf: (tool: string) => Scope | null | undefined,
): MissingScope | undefined {
  let missing: MissingScope | undefined;
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!isToolCall(message)) continue;
    const scope = scopeOf(message.params.name);
    if (!scope || granted.includes(scope)) continue;
    missing ??= { tool: message.params.name, scopes: [] };
    if (!missing.scopes.includes(scope)) missing.scopes.push(scope);
  }
  return missing;
}

export interface InsufficientScopeAnswer {
  status: 403;
  headers: Record<string, string>;
  /** `required_scope` is spec 7.1's; several scopes are space-separated, as OAuth writes a scope (RFC 6749 §3.3). */
  body: { error: 'insufficient_scope'; error_description: string; required_scope: string };
}

/** The 403 answer: the challenge header, and a body that names the scopes to ask for. */
export function insufficientScopeAnswer(missing: MissingScope, resourceMetadataUrl: string): InsufficientScopeAnswer {
  const scope = missing.scopes.join(' ');
  const description =
    missing.scopes.length === 1 ? `the tool ${missing.tool} needs the scope ${scope}` : `these tool calls need the scopes ${scope}`;
  return {
    status: 403,
    headers: { 'www-authenticate': insufficientScopeChallenge(scope, resourceMetadataUrl, description) },
    body: { error: 'insufficient_scope', error_description: description, required_scope: scope },
  };
}

/**
 * Written here rather than by the SDK's `bearerAuthChallengeResponse`, which puts `error_description` second:
 * the parameters come in the order of MCP authorization 2026-07-28's own example (error, scope,
 * resource_metadata, error_description), which clients written against that text may read literally.
 * Values are RFC 7230 quoted strings (RFC 6750 §3).
 */
function insufficientScopeChallenge(scope: string, resourceMetadataUrl: string, description: string): string {
  const quoted = (value: string) => `"${value.replace(/[\\"]/g, '\\$&')}"`;
  return (
    `Bearer error="insufficient_scope", scope=${quoted(scope)}, resource_metadata=${quoted(resourceMetadataUrl)}, ` +
    `error_description=${quoted(description)}`
  );
}

function isToolCall(message: unknown): message is { method: 'tools/call'; params: { name: string } } {
  if (typeof message !== 'object' || message === null) return false;
  const { method, params } = message as { method?: unknown; params?: unknown };
  return method === 'tools/call' && typeof params === 'object' && params !== null && typeof (params as { name?: unknown }).name === 'string';
}
