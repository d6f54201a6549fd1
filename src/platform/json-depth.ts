/**
 * How deeply a JSON value nests, and what its strings hold, found without recursion: a value from outside may
 * nest thousands of levels deep (a 1 MiB body holds 500,000 `[`), which a recursive walk would answer with a
 * stack overflow, an internal error. Values are refused past `MAX_JSON_DEPTH` levels (issue 16): no input of
 * the services needs more, and PostgreSQL's `jsonb` and every later reader then stay well within their limits.
 */

/** The deepest nesting a JSON value from outside may have: `{"a":1}` is one level, `[[1]]` two. */
export const MAX_JSON_DEPTH = 64;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a string from outside cannot be stored as PostgreSQL `text` or inside `jsonb`; undefined when it can:
 * a NUL character (neither type holds one), or half of a UTF-16 surrogate pair (not Unicode: `jsonb` refuses
 * its `\u` escape).
 */
export function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain a NUL character';
  if (LONE_SURROGATE.test(value)) return 'must be well-formed Unicode (a lone UTF-16 surrogate is not)';
  return undefined;
}

/** Where a problem was found: the member names and indexes leading to it from the value walked. */
export type JsonPath = Array<string | number>;

interface Visit {
  value: unknown;
  key?: string | number;
  parent?: Visit;
}

/** How deeply `value` nests (0 for a scalar), counting at most to `limit + 1`. */
export function jsonDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  return walkJson(value, limit, () => undefined).depth;
}

/**
 * Walks `value` (objects, arrays and scalars as JSON.parse makes them) level by level, without recursion.
 * `checkString` sees every string and every member name; the walk stops at its first answer, or as soon as
 * the value nests deeper than `maxDepth`. Returns the problem and where it is, and the depth reached.
 */
export function walkJson(
  value: unknown,
  maxDepth: number,
  checkString: (text: string) => string | undefined,
): { problem?: string; path?: JsonPath; depth: number } {
  let level: Visit[] = [{ value }];
  let depth = 0;
  while (level.length > 0) {
    const next: Visit[] = [];
    let containers = false;
    for (const visit of level) {
      const item = visit.value;
      if (typeof item === 'string') {
        const problem = checkString(item);
        if (problem) return { problem, path: pathOf(visit), depth };
      } else if (Array.isArray(item)) {
        containers = true;
        item.forEach((member, index) => next.push({ value: member, key: index, parent: visit }));
      } else if (item !== null && typeof item === 'object') {
        containers = true;
        for (const [name, member] of Object.entries(item)) {
          const problem = checkString(name);
          if (problem) return { problem: `(a member name) ${problem}`, path: [...pathOf(visit), name], depth };
          next.push({ value: member, key: name, parent: visit });
        }
      }
    }
    if (containers) depth += 1;
    if (depth > maxDepth) return { problem: `must not nest deeper than ${maxDepth} levels`, path: [], depth };
    level = next;
  }
  return { depth };
}

function pathOf(visit: Visit): JsonPath {
  const path: JsonPath = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) path.unshift(at.key);
  return path;
}
