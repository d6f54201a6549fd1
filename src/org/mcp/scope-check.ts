/**
 * The per-tool scope check (DESIGN 4.3, spec 7.1): a `tools/call` whose token lacks the tool's scope is
 * refused at the HTTP level, before the MCP server runs, with 403 and
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="<needed>", resource_metadata="…"`
 * (RFC 6750 §3.1, RFC 9728 §5.1) and a JSON body naming `required_scope`, so the client can send the
 * person back through authorize with that scope. Which scope a tool needs is data on the tool.
 */
import { bearerAuthChallengeResponse, OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import type { Scope } from '../../auth/index.js';

export interface MissingScope {
  tool: string;
  scope: Scope;
}

/**
 * The first `tools/call` in the message (or batch) whose tool needs a scope the token lacks. Messages that
 * are not tool calls, unknown tools and tools open to any token pass: the MCP server answers those.
 */
export function findMissingScope(
  body: unknown,
  granted: readonly string[],
  scopeOf: (tool: string) => Scope | null | undefined,
): MissingScope | undefined {
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!isToolCall(message)) continue;
    const scope = scopeOf(message.params.name);
    if (scope && !granted.includes(scope)) return { tool: message.params.name, scope };
  }
  return undefined;
}

export interface InsufficientScopeAnswer {
  status: 403;
  headers: Record<string, string>;
  body: { error: 'insufficient_scope'; error_description: string; required_scope: string };
}

/** The 403 answer: the SDK's challenge header, and a body that names the scope to ask for. */
export function insufficientScopeAnswer(missing: MissingScope, resourceMetadataUrl: string): InsufficientScopeAnswer {
  const description = `the tool ${missing.tool} needs the scope ${missing.scope}`;
  const challenge = bearerAuthChallengeResponse(new OAuthError(OAuthErrorCode.InsufficientScope, description), {
    requiredScopes: [missing.scope],
    resourceMetadataUrl,
  });
  return {
    status: 403,
    headers: { 'www-authenticate': challenge.headers.get('www-authenticate')! },
    body: { error: 'insufficient_scope', error_description: description, required_scope: missing.scope },
  };
}

function isToolCall(message: unknown): message is { method: 'tools/call'; params: { name: string } } {
  if (typeof message !== 'object' || message === null) return false;
  const { method, params } = message as { method?: unknown; params?: unknown };
  return method === 'tools/call' && typeof params === 'object' && params !== null && typeof (params as { name?: unknown }).name === 'string';
}
