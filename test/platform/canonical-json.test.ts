/**
 * canonicalJson (RFC 8785) and the JSON walk of platform/json-depth.ts: both iterative, so a value nested far
 * deeper than a call stack allows is written or refused, never a stack overflow (issue 16).
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/platform/canonical-json.js';
import { jsonDepth, MAX_JSON_DEPTH, textProblem, walkJson } from '../../src/platform/json-depth.js';

const deepArray = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`);

describe('canonicalJson', () => {
  it('sorts members, drops undefined members and writes undefined array items as null', () => {
    expect(canonicalJson({ b: [1, 'x', null, { d: 2, c: [] }], a: {}, u: undefined, z: [undefined] })).toBe('{"a":{},"b":[1,"x",null,{"c":[],"d":2}],"z":[null]}');
    expect(canonicalJson('s')).toBe('"s"');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('writes a value nested 100,000 levels deep and an array of 300,000 items', () => {
    expect(canonicalJson(deepArray(100_000))).toBe(`${'['.repeat(100_000)}1${']'.repeat(100_000)}`);
    expect(canonicalJson(new Array(300_000).fill(1))).toHaveLength(600_001);
  });
});

describe('walkJson', () => {
  it('counts levels: a scalar 0, {} 1, [[1]] 2, and stops past the limit', () => {
    expect(jsonDepth(1)).toBe(0);
    expect(jsonDepth({})).toBe(1);
    expect(jsonDepth([[1]])).toBe(2);
    expect(jsonDepth(deepArray(MAX_JSON_DEPTH))).toBe(MAX_JSON_DEPTH);
    expect(walkJson(deepArray(100_000), MAX_JSON_DEPTH, textProblem)).toMatchObject({ problem: 'must not nest deeper than 64 levels', depth: 65 });
  });

  it('finds a NUL or a lone surrogate in a value or a member name, with its path', () => {
    expect(walkJson({ a: [{ b: 'x\u0000' }] }, MAX_JSON_DEPTH, textProblem)).toMatchObject({ problem: 'must not contain a NUL character', path: ['a', 0, 'b'] });
    expect(walkJson({ a: { 'k\u0000': 1 } }, MAX_JSON_DEPTH, textProblem)).toMatchObject({ path: ['a', 'k\u0000'] });
    expect(walkJson(['\uD800'], MAX_JSON_DEPTH, textProblem).problem).toMatch(/surrogate/);
    expect(walkJson(['\uD83D\uDE00'], MAX_JSON_DEPTH, textProblem).problem).toBeUndefined();
  });
});
