/**
 * DESIGN 4.4 step 1: "Hard denies: capability disabled, agent disabled or autonomy 0, input not valid
 * against the capability's input schema (that one is an error, not a verdict)." The input check is the
 * caller's (capabilities/execute.ts validates before the gate runs); what remains is checked here.
 */
import type { GateInputs, StepOutcome } from './types.js';

export function hardDenies({ capability, agent }: Pick<GateInputs, 'capability' | 'agent'>): StepOutcome {
  const reasons: string[] = [];
  if (!capability.enabled) reasons.push(`the capability ${capability.key} is disabled`);
  if (agent.status === 'disabled') reasons.push('the acting agent is disabled');
  else if (agent.autonomy === 0) reasons.push('the acting agent has autonomy 0 (observe only)');
  return reasons.length ? { verdict: 'deny', reasons } : { reasons };
}
