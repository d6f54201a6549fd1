/**
 * The two-person rule in the organization file (DESIGN 4.8): a rule's `approvals` is 2 to 10 different people and
 * only means something with `then: require_approval`, so anything else is refused where it is written — the same
 * schema checks the console's rule form.
 */
import { describe, expect, it } from 'vitest';
import { parseOrgFile } from '../../src/org/org-file/schema.js';
import { problemsOf } from '../helpers/org-file-problems.js';

const rule = (then: string, approvals: string) => `rules:\n  - { name: Big wires, when: { capability: wire_money }, then: ${then}, approvals: ${approvals} }\n`;

describe('approvals on a rule of the organization file', () => {
  it('accepts two to ten approvals with require_approval', () => {
    expect(parseOrgFile(rule('require_approval', '2')).rules[0]).toMatchObject({ then: 'require_approval', approvals: 2 });
    expect(parseOrgFile(rule('require_approval', '10')).rules[0].approvals).toBe(10);
    expect(parseOrgFile('rules: [{ name: R, when: {}, then: deny }]').rules[0].approvals).toBeUndefined();
  });

  it.each([
    ['deny', '2', 'rules.0.approvals: approvals goes with then: require_approval only'],
    ['allow', '3', 'rules.0.approvals: approvals goes with then: require_approval only'],
    ['require_approval', '1', 'rules.0.approvals: Too small: expected number to be >=2'],
    ['require_approval', '11', 'rules.0.approvals: Too big: expected number to be <=10'],
    ['require_approval', '2.5', 'rules.0.approvals: Invalid input: expected int, received number'],
  ])('refuses then %s with approvals %s', (then, approvals, problem) => {
    expect(problemsOf(rule(then, approvals))).toEqual([problem]);
  });
});
