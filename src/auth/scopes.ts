/**
 * The nine scopes of interface A (spec 2.3) with the one-line meaning of spec 5.1, which the consent page
 * shows beside each requested scope. A scope is a ceiling, not a grant (spec 5.1).
 */
import { InvalidScope } from './errors.js';

export const SCOPES = {
  'service:ask': "Ask the organization's assistant; list the organization's agents",
  'agents:message': 'Send a named agent something to act on now',
  'memory:read': 'Search and read company memory, with provenance',
  'memory:write': 'Record a fact, decision, or standing instruction',
  'task:read': 'Read tracked work and its progress',
  'task:write': 'Create, answer, and cancel tracked work',
  'integrations:read': 'Discover and describe connected capabilities',
  'integrations:act': 'Execute a consequential capability',
  'governance:admin': 'List and resolve pending decisions',
} as const;

export type Scope = keyof typeof SCOPES;

export const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

/**
 * RFC 6749 §3.3: space-delimited, order irrelevant. Unknown values are refused rather than dropped, so a
 * client never believes it holds a scope it was not given. Absent or empty means no scope: the token can
 * call only what any token may (service_context), which is the narrowest default (spec 5.1).
 */
export function parseScope(value: string | undefined): Scope[] {
  const requested = (value ?? '').split(' ').filter(Boolean);
  const unknown = requested.filter((scope) => !isScope(scope));
  if (unknown.length > 0) throw new InvalidScope(`unknown scope: ${unknown.join(' ')}`);
  return SCOPE_NAMES.filter((scope) => requested.includes(scope));
}

export function formatScope(scopes: readonly string[]): string {
  return scopes.join(' ');
}
