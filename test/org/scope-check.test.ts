import { describe, expect, it } from 'vitest';
import type { Scope } from '../../src/auth/scopes.js';
import { findMissingScope, insufficientScopeAnswer } from '../../src/org/mcp/scope-check.js';
import { orgTools } from '../../src/org/mcp/server.js';

/** A table shaped like DESIGN 4.3's, for the rule alone (the real table is the tools' own `scope`). */
const table: Record<string, Scope | null> = {
  service_context: null,
  search_memory: 'memory:read',
  record_memory: 'memory:write',
  resolve_decision: 'governance:admin',
};
const scopeOf = (tool: string) => (tool in table ? table[tool] : undefined);
const call = (name: string, id = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

describe('the per-tool scope check', () => {
  it.each([
    ['a tool open to any token, with no scopes', call('service_context'), [], undefined],
    ['a scoped tool with its scope', call('search_memory'), ['memory:read'], undefined],
    ['a scoped tool without its scope', call('search_memory'), ['memory:write'], { tool: 'search_memory', scopes: ['memory:read'] }],
    ['a scoped tool with no scopes at all', call('resolve_decision'), [], { tool: 'resolve_decision', scopes: ['governance:admin'] }],
    ['an unknown tool (the server answers it)', call('no_such_tool'), [], undefined],
    ['a message that is not a tool call', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, [], undefined],
    ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }, [], undefined],
    ['a tool call without a name', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }, [], undefined],
    ['garbage', 'not json-rpc', [], undefined],
    ['a batch whose second call lacks its scope', [call('search_memory', 1), call('record_memory', 2)], ['memory:read'], { tool: 'record_memory', scopes: ['memory:write'] }],
    [
      'a batch lacking two scopes, one of them twice: all of them, each once, in one challenge',
      [call('record_memory', 1), call('search_memory', 2), call('record_memory', 3), call('resolve_decision', 4)],
      [],
      { tool: 'record_memory', scopes: ['memory:write', 'memory:read', 'governance:admin'] },
    ],
    ['a batch where every call is allowed', [call('service_context', 1), call('search_memory', 2)], ['memory:read'], undefined],
  ] as const)('%s', (_name, body, granted, expected) => {
    expect(findMissingScope(body, granted, scopeOf)).toEqual(expected);
  });

  it('builds the 403 answer of DESIGN 4.3 with the challenge of MCP authorization 2026-07-28, word for word, and required_scope', () => {
    const answer = insufficientScopeAnswer({ tool: 'search_memory', scopes: ['memory:read'] }, 'https://org.example/.well-known/oauth-protected-resource/mcp');
    expect(answer.status).toBe(403);
    // The parameters in the order of the revision's "Runtime Insufficient Scope Errors" example.
    expect(answer.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="memory:read", ' +
        'resource_metadata="https://org.example/.well-known/oauth-protected-resource/mcp", ' +
        'error_description="the tool search_memory needs the scope memory:read"',
    );
    expect(answer.body).toEqual({
      error: 'insufficient_scope',
      error_description: 'the tool search_memory needs the scope memory:read',
      required_scope: 'memory:read',
    });
  });

  it('names every missing scope in one challenge, space-separated (RFC 6750 §3: scope is a space-delimited list)', () => {
    const answer = insufficientScopeAnswer({ tool: 'record_memory', scopes: ['memory:write', 'governance:admin'] }, 'https://org.example/m');
    expect(answer.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="memory:write governance:admin", resource_metadata="https://org.example/m", ' +
        'error_description="these tool calls need the scopes memory:write governance:admin"',
    );
    expect(answer.body.required_scope).toBe('memory:write governance:admin');
  });

  /** DESIGN 4.3's table: every tool and the scope it needs (null: any token). */
  const DESIGN_SCOPES: Record<string, string | null> = {
    service_context: null,
    ask: 'service:ask',
    list_agents: 'service:ask',
    message_agent: 'agents:message',
    search_memory: 'memory:read',
    get_memory: 'memory:read',
    record_memory: 'memory:write',
    list_tasks: 'task:read',
    get_task: 'task:read',
    create_task: 'task:write',
    answer_task: 'task:write',
    cancel_task: 'task:write',
    list_capabilities: 'integrations:read',
    describe_capability: 'integrations:read',
    execute_capability: 'integrations:act',
    list_decisions: 'governance:admin',
    resolve_decision: 'governance:admin',
    get_operation: null,
  };

  it.each(orgTools.map((tool) => [tool.name, tool.scope] as const))('is fed by the real tools: %s needs %s, as DESIGN 4.3 says', (name, scope) => {
    expect(Object.hasOwn(DESIGN_SCOPES, name)).toBe(true);
    expect(scope).toBe(DESIGN_SCOPES[name]);
  });
});
