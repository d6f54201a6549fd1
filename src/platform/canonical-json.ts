/**
 * Canonical JSON (RFC 8785, JSON Canonicalization Scheme) for values that came from JSON: object members
 * sorted by their names' UTF-16 code units, no white space, strings and numbers as ECMAScript's
 * `JSON.stringify` writes them (which is what RFC 8785 §3.2.2 prescribes). Two equal arguments hash equal
 * whatever order their members arrived in (idempotency keys, decision bindings).
 *
 * Written here because the maintained implementation (`canonicalize` 5.x) requires Node 22. Iterative, not
 * recursive: however deeply a value nests, the answer is its text, never a stack overflow.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Work to do, last first: a value to write, or text (a comma, a closing bracket) to write as it is.
  const work: Array<{ value: unknown } | string> = [{ value }];
  while (work.length > 0) {
    const item = work.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const current = item.value;
    if (current === null || typeof current !== 'object') {
      out.push(JSON.stringify(current) ?? 'null');
    } else if (Array.isArray(current)) {
      const parts: Array<{ value: unknown } | string> = ['['];
      current.forEach((member, index) => {
        if (index) parts.push(',');
        parts.push({ value: member === undefined ? null : member });
      });
      parts.push(']');
      for (let index = parts.length - 1; index >= 0; index--) work.push(parts[index]);
    } else {
      const record = current as Record<string, unknown>;
      const names = Object.keys(record)
        .filter((name) => record[name] !== undefined)
        .sort();
      const parts: Array<{ value: unknown } | string> = ['{'];
      names.forEach((name, index) => parts.push(`${index ? ',' : ''}${JSON.stringify(name)}:`, { value: record[name] }));
      parts.push('}');
      for (let index = parts.length - 1; index >= 0; index--) work.push(parts[index]);
    }
  }
  return out.join('');
}
