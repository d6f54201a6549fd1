/**
 * Canonical JSON (RFC 8785, JSON Canonicalization Scheme) for values that came from JSON: object members
 * sorted by their names' UTF-16 code units, no white space, strings and numbers as ECMAScript's
 * `JSON.stringify` writes them (which is what RFC 8785 §3.2.2 prescribes). Two equal arguments hash equal
 * whatever order their members arrived in (idempotency keys, decision bindings).
 *
 * Written here because the maintained implementation (`canonicalize` 5.x) requires Node 22.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const members = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${members.join(',')}}`;
}
