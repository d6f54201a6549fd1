/**
 * DESIGN 4.4 step 2: "Standing rules: every enforcing rule that matches counts; deny beats
 * require_approval beats allow. Conditions: capability, agent, risk, weekdays and hours ("09:00-17:00") in
 * a required timezone, and input ({path: "/amount", op: gt|gte|lt|lte|eq|ne|in, value}). A rule with
 * mode: shadow never changes the verdict; what it would have done is stored in shadow[]."
 */
import { isDeepStrictEqual } from 'node:util';
import type { GateInputs, GateRule, InputCondition, ShadowEntry, StepOutcome, Verdict, Weekday } from './types.js';

const SEVERITY: Record<Verdict, number> = { allow: 0, require_approval: 1, deny: 2 };

export function standingRules(inputs: GateInputs): StepOutcome {
  const matched = inputs.rules.filter((rule) => ruleMatches(rule, inputs));
  const enforced = matched.filter((rule) => rule.mode === 'enforce');
  const shadow: ShadowEntry[] = matched
    .filter((rule) => rule.mode === 'shadow')
    .map((rule) => ({ rule_id: rule.id, name: rule.name, would: rule.then }));
  if (!enforced.length) return { reasons: [], shadow };
  const strictest = enforced.reduce((worst, rule) => (SEVERITY[rule.then] > SEVERITY[worst] ? rule.then : worst), 'allow' as Verdict);
  const deciding = enforced.filter((rule) => rule.then === strictest);
  // DESIGN 4.8: of several require_approval rules, the one asking the most people sets the number.
  const approvals = strictest === 'require_approval' ? Math.max(1, ...deciding.map((rule) => rule.approvals ?? 1)) : 1;
  return {
    verdict: strictest,
    reasons: deciding.map((rule) => `rule "${rule.name}" says ${rule.then}`),
    rule_ids: deciding.map((rule) => rule.id),
    shadow,
    allowRuleMatched: enforced.some((rule) => rule.then === 'allow'),
    ...(approvals > 1 ? { approvals } : {}),
  };
}

export function ruleMatches(rule: GateRule, { now, capability, agent, input }: GateInputs): boolean {
  const when = rule.when;
  if (rule.until && Date.parse(now) >= Date.parse(rule.until)) return false;
  if (when.capability !== undefined && !oneOf(when.capability, [capability.key, capability.id])) return false;
  if (when.agent !== undefined && !oneOf(when.agent, [agent.key, agent.id])) return false;
  if (when.risk !== undefined && !oneOf(when.risk, [capability.risk])) return false;
  if (when.weekdays || when.hours) {
    // The file refuses weekdays or hours without a zone; a rule that still lacks one never matches.
    if (!when.timezone) return false;
    const local = localTime(now, when.timezone);
    if (when.weekdays && !when.weekdays.includes(local.weekday)) return false;
    if (when.hours && !withinHours(when.hours, local.minutes)) return false;
  }
  if (when.input !== undefined) {
    const conditions = Array.isArray(when.input) ? when.input : [when.input];
    if (!conditions.every((condition) => inputHolds(condition, input))) return false;
  }
  return true;
}

function oneOf(wanted: string | readonly string[], actual: readonly (string | null)[]): boolean {
  const list = typeof wanted === 'string' ? [wanted] : wanted;
  return actual.some((value) => value !== null && list.includes(value));
}

const WEEKDAY_OF: Record<string, Weekday> = { Mon: 'mon', Tue: 'tue', Wed: 'wed', Thu: 'thu', Fri: 'fri', Sat: 'sat', Sun: 'sun' };

/** The weekday and minute of the day at `iso` on the wall clocks of `timezone` (DST included). */
export function localTime(iso: string, timezone: string): { weekday: Weekday; minutes: number } {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: timezone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
    .formatToParts(new Date(iso));
  const part = (type: string) => parts.find((entry) => entry.type === type)!.value;
  return { weekday: WEEKDAY_OF[part('weekday')], minutes: Number(part('hour')) * 60 + Number(part('minute')) };
}

export const HOURS_PATTERN = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-4]):([0-5]\d)$/;

/** `"09:00-17:00"`: start inclusive, end exclusive; a start after the end spans midnight (`"22:00-06:00"`). */
function withinHours(hours: string, minutes: number): boolean {
  const match = HOURS_PATTERN.exec(hours);
  if (!match) return false;
  const start = Number(match[1]) * 60 + Number(match[2]);
  const end = Number(match[3]) * 60 + Number(match[4]);
  return start <= end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
}

/** A value absent at `path` satisfies no condition, so a rule about `/amount` never fires on input without it. */
function inputHolds({ path, op, value }: InputCondition, input: unknown): boolean {
  const found = resolvePointer(input, path);
  if (!found.present) return false;
  const actual = found.value;
  switch (op) {
    case 'eq':
      return isDeepStrictEqual(actual, value);
    case 'ne':
      return !isDeepStrictEqual(actual, value);
    case 'in':
      return Array.isArray(value) && value.some((candidate) => isDeepStrictEqual(actual, candidate));
    default:
      return compare(actual, value, op);
  }
}

function compare(actual: unknown, value: unknown, op: 'gt' | 'gte' | 'lt' | 'lte'): boolean {
  const comparable = (typeof actual === 'number' && typeof value === 'number') || (typeof actual === 'string' && typeof value === 'string');
  if (!comparable) return false;
  const a = actual as number | string;
  const b = value as number | string;
  return op === 'gt' ? a > b : op === 'gte' ? a >= b : op === 'lt' ? a < b : a <= b;
}

/** RFC 6901 JSON Pointer: `""` is the whole document, `/a/0/b~1c` walks members and array indexes. */
export function resolvePointer(document: unknown, pointer: string): { present: boolean; value?: unknown } {
  if (pointer === '') return { present: true, value: document };
  if (!pointer.startsWith('/')) return { present: false };
  let current: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) >= current.length) return { present: false };
      current = current[Number(token)];
    } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return { present: false };
    }
  }
  return { present: true, value: current };
}
