/**
 * The runtime gate (spec 5.1, DESIGN 4.4): decides every capability execution, whether a connected client
 * or an agent asks. Pure: the caller loads the inputs (capabilities/gate-inputs.ts) and stores the verdict it returns
 * (a gate_verdicts row), so the same inputs always give the same verdict and a stored one can be replayed.
 *
 * The steps run in DESIGN's order. A step's `deny` ends the decision at once; otherwise the strictest
 * verdict any step demanded wins, and with none the action is allowed. A pause also says how many different
 * people must approve it (DESIGN 4.8's two-person rule), when the risk tier or a matching rule asks for more than one.
 */
import { autonomy } from './autonomy.js';
import { budget } from './budget.js';
import { hardDenies } from './hard-denies.js';
import { standingRules } from './rules.js';
import type { GateInputs, GateStep, GateVerdict, ShadowEntry } from './types.js';

export * from './types.js';

/** DESIGN 4.4's steps, in its order. */
const STEPS: readonly { name: string; run: GateStep }[] = [
  { name: 'hard denies', run: hardDenies },
  { name: 'standing rules', run: standingRules },
  { name: 'budget', run: budget },
  { name: 'autonomy', run: autonomy },
];

export function decide(inputs: GateInputs): GateVerdict {
  const shadow: ShadowEntry[] = [];
  const allowed = { reasons: [] as string[], rule_ids: [] as string[] };
  const paused = { reasons: [] as string[], rule_ids: [] as string[] };
  let allowRuleMatched = false;
  let approvals = inputs.approvalsByRisk[inputs.capability.risk] ?? 1;
  for (const step of STEPS) {
    const outcome = step.run(inputs, { allowRuleMatched });
    shadow.push(...(outcome.shadow ?? []));
    allowRuleMatched ||= outcome.allowRuleMatched ?? false;
    if (outcome.verdict === 'deny') return { verdict: 'deny', reasons: outcome.reasons, rule_ids: outcome.rule_ids ?? [], shadow };
    const bucket = outcome.verdict === 'require_approval' ? paused : outcome.verdict === 'allow' ? allowed : undefined;
    bucket?.reasons.push(...outcome.reasons);
    bucket?.rule_ids.push(...(outcome.rule_ids ?? []));
    approvals = Math.max(approvals, outcome.approvals ?? 1);
  }
  // DESIGN 4.8: the risk tier and the rules set how many people approve a pause; they never make one.
  if (paused.reasons.length) return { verdict: 'require_approval', ...paused, shadow, ...(approvals > 1 ? { approvals } : {}) };
  if (!allowed.reasons.length) allowed.reasons.push("within the agent's autonomy, the rules and the budget");
  return { verdict: 'allow', ...allowed, shadow };
}

/** DESIGN 4.4: approving runs the action "after checking the hard denies again". */
export function recheckHardDenies(inputs: Pick<GateInputs, 'capability' | 'agent'>): GateVerdict | undefined {
  const outcome = hardDenies(inputs);
  return outcome.verdict === 'deny' ? { verdict: 'deny', reasons: outcome.reasons, rule_ids: [], shadow: [] } : undefined;
}
