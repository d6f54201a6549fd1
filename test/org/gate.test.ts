/**
 * The runtime gate of DESIGN 4.4 as a table: autonomy × risk, standing rules (deny beats require_approval
 * beats allow; weekday and hour windows across zones and a DST change; input conditions; shadow rules),
 * the monthly budget and the hard denies; and how many people a pause needs (the two-person rule of DESIGN 4.8).
 */
import { describe, expect, it } from 'vitest';
import { decide, type GateInputs, type GateRule, type Risk, type Verdict } from '../../src/org/gate/index.js';

/** Wednesday 2026-03-04 10:30 UTC: 11:30 in Berlin, 05:30 in New York. */
const WEDNESDAY = '2026-03-04T10:30:00.000Z';

function inputs(overrides: {
  risk?: Risk;
  autonomy?: number;
  cost?: number;
  budget?: number | null;
  spent?: number;
  enabled?: boolean;
  agentStatus?: 'active' | 'disabled';
  rules?: readonly GateRule[];
  now?: string;
  input?: unknown;
  approvalsByRisk?: GateInputs['approvalsByRisk'];
} = {}): GateInputs {
  return {
    now: overrides.now ?? WEDNESDAY,
    capability: { id: 'cap_1', key: 'notify_team', risk: overrides.risk ?? 'low', cost: overrides.cost ?? 0, enabled: overrides.enabled ?? true },
    agent: {
      id: 'agt_1',
      key: 'scribe',
      status: overrides.agentStatus ?? 'active',
      autonomy: overrides.autonomy ?? 2,
      budget: overrides.budget ?? null,
      spent: overrides.spent ?? 0,
    },
    input: overrides.input ?? { text: 'hello', amount: 150, channel: 'ops' },
    rules: [...(overrides.rules ?? [])],
    approvalsByRisk: overrides.approvalsByRisk ?? {},
  };
}

let ruleCount = 0;
function rule(then: Verdict, when: GateRule['when'], extra: Partial<GateRule> = {}): GateRule {
  ruleCount += 1;
  return { id: `rul_${ruleCount}`, name: `${then} ${ruleCount}`, when, then, mode: 'enforce', ...extra };
}

describe('autonomy against risk, with no rules and no budget', () => {
  it.each([
    [1, 'low', 'require_approval'],
    [1, 'medium', 'require_approval'],
    [1, 'high', 'require_approval'],
    [1, 'critical', 'require_approval'],
    [2, 'low', 'allow'],
    [2, 'medium', 'require_approval'],
    [2, 'high', 'require_approval'],
    [2, 'critical', 'require_approval'],
    [3, 'low', 'allow'],
    [3, 'medium', 'allow'],
    [3, 'high', 'allow'],
    [3, 'critical', 'require_approval'],
    [0, 'low', 'deny'],
    [0, 'critical', 'deny'],
  ] as const)('autonomy %i, %s risk → %s', (autonomy, risk, verdict) => {
    expect(decide(inputs({ autonomy, risk })).verdict).toBe(verdict);
  });
});

describe('hard denies come first and nothing overrides them', () => {
  it.each([
    ['a disabled capability', { enabled: false }, /capability notify_team is disabled/],
    ['a disabled agent', { agentStatus: 'disabled' as const }, /agent is disabled/],
    ['autonomy 0', { autonomy: 0 }, /autonomy 0/],
    ['a disabled capability even with an allow rule', { enabled: false, rules: [rule('allow', {})] }, /disabled/],
    ['a disabled agent at autonomy 3 with budget left', { agentStatus: 'disabled' as const, autonomy: 3, budget: 10 }, /agent is disabled/],
  ])('%s → deny', (_name, overrides, reason) => {
    const verdict = decide(inputs(overrides));
    expect(verdict.verdict).toBe('deny');
    expect(verdict.reasons.join(' ')).toMatch(reason);
    expect(verdict.rule_ids).toEqual([]);
  });
});

describe('standing rules: every enforcing match counts, deny > require_approval > allow', () => {
  const deny = rule('deny', { capability: 'notify_team' });
  const requireApproval = rule('require_approval', { agent: 'scribe' });
  const allow = rule('allow', { risk: 'high' });
  const allowAny = rule('allow', { capability: ['deploy', 'notify_team'] });

  it.each([
    ['deny alone', [deny], 'deny', [deny.id]],
    ['deny beats require_approval', [requireApproval, deny], 'deny', [deny.id]],
    ['deny beats allow', [allowAny, deny], 'deny', [deny.id]],
    ['require_approval beats allow', [allowAny, requireApproval], 'require_approval', [requireApproval.id]],
    ['an allow rule lets autonomy 1 run a high-risk action', [allow], 'allow', [allow.id]],
    ['two allow rules both count', [allow, allowAny], 'allow', [allow.id, allowAny.id]],
    ['a rule for another capability does not match', [rule('deny', { capability: 'deploy' })], 'require_approval', []],
    ['a rule for another agent does not match', [rule('deny', { agent: 'other' })], 'require_approval', []],
    ['a rule naming the agent by id matches', [rule('deny', { agent: 'agt_1' })], 'deny', undefined],
    ['a rule for another risk does not match', [rule('deny', { risk: ['low', 'critical'] })], 'require_approval', []],
    ['an expired learned allow no longer counts', [rule('allow', { agent: 'agt_1' }, { until: '2026-03-01T00:00:00Z' })], 'require_approval', []],
    ['an unexpired learned allow counts', [rule('allow', { agent: 'agt_1' }, { id: 'lr_1', until: '2026-04-01T00:00:00Z' })], 'allow', ['lr_1']],
  ])('%s', (_name, rules, verdict, ruleIds) => {
    const result = decide(inputs({ autonomy: 1, risk: 'high', rules }));
    expect(result.verdict).toBe(verdict);
    if (ruleIds) expect(result.rule_ids).toEqual(ruleIds);
  });
});

describe('weekdays and hours in the rule\'s own time zone', () => {
  it.each([
    // Wednesday 10:30 UTC is Wednesday 11:30 in Berlin and 05:30 in New York.
    ['office hours in Berlin', WEDNESDAY, { hours: '09:00-17:00', timezone: 'Europe/Berlin' }, true],
    ['office hours in New York', WEDNESDAY, { hours: '09:00-17:00', timezone: 'America/New_York' }, false],
    ['a night window in New York spanning midnight', WEDNESDAY, { hours: '22:00-06:00', timezone: 'America/New_York' }, true],
    ['end is exclusive', '2026-03-04T16:00:00Z', { hours: '09:00-17:00', timezone: 'Europe/Berlin' }, false],
    ['start is inclusive', '2026-03-04T08:00:00Z', { hours: '09:00-17:00', timezone: 'Europe/Berlin' }, true],
    ['until 24:00', '2026-03-04T22:59:00Z', { hours: '12:00-24:00', timezone: 'Europe/Berlin' }, true],
    ['Wednesday in Berlin', WEDNESDAY, { weekdays: ['wed'], timezone: 'Europe/Berlin' }, true],
    // Wednesday 23:30 UTC is already Thursday in Tokyo and still Wednesday in Los Angeles.
    ['the next day in Tokyo', '2026-03-04T23:30:00Z', { weekdays: ['thu'], timezone: 'Asia/Tokyo' }, true],
    ['not Wednesday in Tokyo', '2026-03-04T23:30:00Z', { weekdays: ['wed'], timezone: 'Asia/Tokyo' }, false],
    ['still Wednesday in Los Angeles', '2026-03-04T23:30:00Z', { weekdays: ['wed'], timezone: 'America/Los_Angeles' }, true],
    ['the weekend in Berlin on a Saturday', '2026-03-07T12:00:00Z', { weekdays: ['sat', 'sun'], timezone: 'Europe/Berlin' }, true],
    ['weekdays and hours together', '2026-03-07T12:00:00Z', { weekdays: ['sat'], hours: '09:00-12:00', timezone: 'Europe/Berlin' }, false],
    // Berlin moves to summer time on 2026-03-29: 07:30 UTC is 08:30 the day before and 09:30 that day.
    ['before the DST change, 07:30 UTC is 08:30 in Berlin', '2026-03-28T07:30:00Z', { hours: '09:00-17:00', timezone: 'Europe/Berlin' }, false],
    ['after the DST change, 07:30 UTC is 09:30 in Berlin', '2026-03-29T07:30:00Z', { hours: '09:00-17:00', timezone: 'Europe/Berlin' }, true],
    ['a zone without DST is unchanged', '2026-03-29T07:30:00Z', { hours: '09:00-17:00', timezone: 'UTC' }, false],
    ['hours without a time zone never match', WEDNESDAY, { hours: '00:00-24:00' }, false],
  ] as const)('%s', (_name, now, when, matches) => {
    const result = decide(inputs({ now, autonomy: 2, risk: 'low', rules: [rule('deny', when as GateRule['when'])] }));
    expect(result.verdict).toBe(matches ? 'deny' : 'allow');
  });
});

describe('input conditions over a JSON Pointer into the action', () => {
  it.each([
    ['gt over', { path: '/amount', op: 'gt', value: 100 }, true],
    ['gt equal', { path: '/amount', op: 'gt', value: 150 }, false],
    ['gte equal', { path: '/amount', op: 'gte', value: 150 }, true],
    ['lt', { path: '/amount', op: 'lt', value: 200 }, true],
    ['lte', { path: '/amount', op: 'lte', value: 149 }, false],
    ['eq a string', { path: '/channel', op: 'eq', value: 'ops' }, true],
    ['ne a string', { path: '/channel', op: 'ne', value: 'ops' }, false],
    ['in a list', { path: '/channel', op: 'in', value: ['ops', 'sales'] }, true],
    ['not in a list', { path: '/channel', op: 'in', value: ['sales'] }, false],
    ['a missing member never matches', { path: '/refund', op: 'ne', value: 1 }, false],
    ['a number compared with a string never matches', { path: '/amount', op: 'gt', value: '100' }, false],
    ['a nested member', { path: '/meta/tags/1', op: 'eq', value: 'b' }, true],
    ['an escaped member name', { path: '/a~1b', op: 'eq', value: true }, true],
    ['the whole input', { path: '', op: 'eq', value: { amount: 150, channel: 'ops', meta: { tags: ['a', 'b'] }, 'a/b': true } }, true],
    ['both of two conditions', [{ path: '/amount', op: 'gt', value: 100 }, { path: '/channel', op: 'eq', value: 'ops' }], true],
    ['only one of two conditions', [{ path: '/amount', op: 'gt', value: 100 }, { path: '/channel', op: 'eq', value: 'x' }], false],
  ] as const)('%s', (_name, condition, matches) => {
    const input = { amount: 150, channel: 'ops', meta: { tags: ['a', 'b'] }, 'a/b': true };
    const result = decide(inputs({ autonomy: 3, risk: 'low', input, rules: [rule('require_approval', { input: condition as never })] }));
    expect(result.verdict).toBe(matches ? 'require_approval' : 'allow');
  });
});

describe('shadow rules are recorded and never enforced', () => {
  it.each([
    ['a shadow deny', 'deny', 'allow'],
    ['a shadow require_approval', 'require_approval', 'allow'],
    ['a shadow allow', 'allow', 'require_approval'],
  ] as const)('%s leaves the verdict alone', (_name, then, expected) => {
    const shadowRule = rule(then, { capability: 'notify_team' }, { mode: 'shadow' });
    // Autonomy 2 runs a low-risk action alone and pauses a medium one.
    const result = decide(inputs({ autonomy: 2, risk: then === 'allow' ? 'medium' : 'low', rules: [shadowRule] }));
    expect(result.verdict).toBe(expected);
    expect(result.rule_ids).toEqual([]);
    expect(result.shadow).toEqual([{ rule_id: shadowRule.id, name: shadowRule.name, would: then }]);
  });

  it('a shadow rule is recorded beside an enforcing one', () => {
    const shadowRule = rule('allow', {}, { mode: 'shadow' });
    const enforcing = rule('deny', {});
    const result = decide(inputs({ rules: [shadowRule, enforcing] }));
    expect(result).toEqual({ verdict: 'deny', reasons: [`rule "${enforcing.name}" says deny`], rule_ids: [enforcing.id], shadow: [{ rule_id: shadowRule.id, name: shadowRule.name, would: 'allow' }] });
  });
});

describe('the monthly budget', () => {
  it.each([
    ['no budget limit', { cost: 5, budget: null }, 'allow'],
    ['cost within what remains', { cost: 5, budget: 10, spent: 5 }, 'allow'],
    ['cost over what remains', { cost: 5, budget: 10, spent: 6 }, 'require_approval'],
    ['a spent budget and a free capability', { cost: 0, budget: 10, spent: 10 }, 'allow'],
    ['over budget even with an allow rule', { cost: 5, budget: 4, rules: [rule('allow', {})] }, 'require_approval'],
    ['over budget with a deny rule', { cost: 5, budget: 4, rules: [rule('deny', {})] }, 'deny'],
    ['over budget at autonomy 3', { cost: 5, budget: 4, autonomy: 3 }, 'require_approval'],
    ['over budget with a disabled capability', { cost: 5, budget: 4, enabled: false }, 'deny'],
  ] as const)('%s → %s', (_name, overrides, verdict) => {
    const result = decide(inputs({ autonomy: 2, risk: 'low', ...overrides }));
    expect(result.verdict).toBe(verdict);
    if (verdict === 'require_approval') expect(result.reasons.join(' ')).toMatch(/budget/);
  });
});

describe('how many different people must approve a pause (the two-person rule)', () => {
  const twoPeople = rule('require_approval', { capability: 'notify_team' }, { approvals: 2 });
  const threePeople = rule('require_approval', {}, { approvals: 3 });
  const onePerson = rule('require_approval', {});
  it.each([
    ['an ordinary pause', { risk: 'high' }, 'require_approval', undefined],
    ['a rule asking two people', { rules: [twoPeople] }, 'require_approval', 2],
    ['the most any matching rule asks', { rules: [onePerson, twoPeople, threePeople] }, 'require_approval', 3],
    ['the risk tier asking two people', { risk: 'critical', approvalsByRisk: { critical: 2 } }, 'require_approval', 2],
    ['the risk tier of another risk', { risk: 'high', approvalsByRisk: { critical: 2 } }, 'require_approval', undefined],
    ['a rule asking more than the tier', { risk: 'critical', approvalsByRisk: { critical: 2 }, rules: [threePeople] }, 'require_approval', 3],
    ['the tier asking more than a rule', { risk: 'critical', approvalsByRisk: { critical: 3 }, rules: [twoPeople] }, 'require_approval', 3],
    ['the tier on a pause for the budget', { cost: 5, budget: 4, approvalsByRisk: { low: 2 } }, 'require_approval', 2],
    ['the tier never pauses what would run', { risk: 'low', approvalsByRisk: { low: 2 } }, 'allow', undefined],
    ['an allow rule lets a tiered action run', { risk: 'critical', approvalsByRisk: { critical: 2 }, rules: [rule('allow', {})] }, 'allow', undefined],
    ['a deny beats a two-person rule', { rules: [twoPeople, rule('deny', {})] }, 'deny', undefined],
    ['a shadow two-person rule asks nobody', { rules: [rule('require_approval', {}, { approvals: 2, mode: 'shadow' })] }, 'allow', undefined],
  ] as const)('%s → %s, approvals %s', (_name, overrides, verdict, approvals) => {
    const result = decide(inputs({ autonomy: 2, ...overrides }));
    expect(result.verdict).toBe(verdict);
    expect(result.approvals).toBe(approvals);
  });
});
