/**
 * What the gate decides over (DESIGN 4.4): everything is loaded by the caller, so the gate itself is pure.
 */
export const RISKS = ['low', 'medium', 'high', 'critical'] as const;
export type Risk = (typeof RISKS)[number];

export const VERDICTS = ['allow', 'require_approval', 'deny'] as const;
export type Verdict = (typeof VERDICTS)[number];

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export const INPUT_OPS = ['gt', 'gte', 'lt', 'lte', 'eq', 'ne', 'in'] as const;
export type InputOp = (typeof INPUT_OPS)[number];

/** `{path: "/amount", op: "gt", value: 100}`: `path` is a JSON Pointer (RFC 6901) into the action's input. */
export interface InputCondition {
  path: string;
  op: InputOp;
  value: unknown;
}

/** A standing rule's conditions; every condition given must hold for the rule to match. */
export interface RuleConditions {
  /** Capability keys or ids. */
  capability?: string | string[];
  /** Agent keys or ids (a connected client has only an id). */
  agent?: string | string[];
  risk?: Risk | Risk[];
  weekdays?: Weekday[];
  /** `"09:00-17:00"`: from the first time (inclusive) to the second (exclusive); may span midnight. */
  hours?: string;
  /** IANA zone of `weekdays` and `hours`; required with either. */
  timezone?: string;
  input?: InputCondition | InputCondition[];
}

export interface GateRule {
  id: string;
  name: string;
  when: RuleConditions;
  then: Verdict;
  /** `shadow`: recorded in `shadow[]`, never changes the verdict. */
  mode: 'enforce' | 'shadow';
  /** Learned rules end at `until` (ISO); file rules have none. */
  until?: string | null;
  /** With `require_approval`: how many different people must approve (DESIGN 4.8); none means one. */
  approvals?: number | null;
}

export interface GateInputs {
  /** ISO time of the decision. */
  now: string;
  capability: { id: string; key: string; risk: Risk; cost: number; enabled: boolean };
  agent: {
    id: string;
    key: string | null;
    status: 'active' | 'disabled';
    autonomy: number;
    /** Units per calendar month; null for no limit. */
    budget: number | null;
    /** Units already spent this calendar month (UTC). */
    spent: number;
  };
  input: unknown;
  rules: GateRule[];
  /** The organization's two-person rule by risk tier (DESIGN 4.8), such as `{critical: 2}`; a tier not named needs one. */
  approvalsByRisk: Partial<Record<Risk, number>>;
}

export interface ShadowEntry {
  rule_id: string;
  name: string;
  /** What the rule would have done had it been enforced. */
  would: Verdict;
}

export interface GateVerdict {
  verdict: Verdict;
  reasons: string[];
  rule_ids: string[];
  shadow: ShadowEntry[];
  /**
   * With `require_approval`, when more than one person must approve (DESIGN 4.8): how many different people, the
   * most that the capability's risk tier and the matching rules ask for. Absent means one.
   */
  approvals?: number;
}

/**
 * What one step found: a verdict it demands (none when it has nothing to say), its reasons, the rules
 * behind it, and whether a matching `allow` rule lets the later autonomy step stand aside.
 */
export interface StepOutcome {
  verdict?: Verdict;
  reasons: string[];
  rule_ids?: string[];
  shadow?: ShadowEntry[];
  allowRuleMatched?: boolean;
  /** How many different people must approve, when the step's `require_approval` asks for more than one. */
  approvals?: number;
}

export type GateStep = (inputs: GateInputs, earlier: { allowRuleMatched: boolean }) => StepOutcome;
