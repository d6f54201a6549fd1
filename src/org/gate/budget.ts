/**
 * DESIGN 4.4 step 3: "Budget: cost over the agent's remaining budget for the calendar month (UTC) →
 * require_approval."
 */
import type { GateInputs, StepOutcome } from './types.js';

export function budget({ capability, agent }: GateInputs): StepOutcome {
  if (agent.budget === null || capability.cost === 0) return { reasons: [] };
  const remaining = Math.max(agent.budget - agent.spent, 0);
  if (capability.cost <= remaining) return { reasons: [] };
  return {
    verdict: 'require_approval',
    reasons: [`the cost ${capability.cost} is over the agent's remaining budget of ${remaining} units this month`],
  };
}
