/**
 * DESIGN 4.4 step 4: "Autonomy against risk, unless an allow rule matched: autonomy 1 pauses everything,
 * 2 runs low only, 3 runs all but critical."
 */
import type { GateInputs, Risk, StepOutcome } from './types.js';

/** The risks each autonomy level runs without a person (0 never gets here: a hard deny). */
const RUNS_ALONE: Record<number, readonly Risk[]> = {
  1: [],
  2: ['low'],
  3: ['low', 'medium', 'high'],
};

export function autonomy({ capability, agent }: GateInputs, earlier: { allowRuleMatched: boolean }): StepOutcome {
  if (earlier.allowRuleMatched) return { reasons: [] };
  if ((RUNS_ALONE[agent.autonomy] ?? []).includes(capability.risk)) return { reasons: [] };
  return {
    verdict: 'require_approval',
    reasons: [`an agent with autonomy ${agent.autonomy} needs a person's approval for a ${capability.risk}-risk capability`],
  };
}
