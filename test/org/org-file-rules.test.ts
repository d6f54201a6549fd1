/**
 * The organization file's gate settings (DESIGN 4.2, 4.4): rule conditions on hours, input and shadow mode,
 * `decision_ttl`, clear problems for bad values; and learned rules, which re-applying the file never drops.
 */
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyOrgFile } from '../../src/org/org-file/apply.js';
import { parseOrgFile } from '../../src/org/org-file/schema.js';
import { createLearnedRule, loadGateRules } from '../../src/org/rules/records.js';
import { agents, capabilities, organization, people } from '../../src/org/schema.js';
import type { Database } from '../../src/platform/database.js';
import { engines } from '../helpers/databases.js';
import { openOrgDatabase } from '../helpers/org.js';
import { problemsOf } from '../helpers/org-file-problems.js';

const rule = (when: string, extra = '') => `rules:\n  - { name: R, when: ${when}, then: deny${extra} }\n`;

describe('the gate settings of the organization file', () => {
  it('accepts the rules of DESIGN 4.2 with hours, input conditions and shadow mode, and decision_ttl', () => {
    const file = parseOrgFile(`
rules:
  - { name: Scribe may notify in office hours, when: { agent: scribe, capability: notify_team, hours: "09:00-17:00", timezone: Europe/Berlin }, then: allow }
  - { name: Large refunds, when: { capability: refund, input: { path: /amount, op: gt, value: 100 } }, then: require_approval }
  - { name: Trial, when: { capability: notify_team }, then: deny, mode: shadow }
decision_ttl: 12h
`);
    expect(file.rules.map((item) => item.mode)).toEqual(['enforce', 'enforce', 'shadow']);
    expect(file.rules[0].when).toEqual({ agent: 'scribe', capability: 'notify_team', hours: '09:00-17:00', timezone: 'Europe/Berlin' });
    expect(file.rules[1].when.input).toEqual({ path: '/amount', op: 'gt', value: 100 });
    expect(file.decision_ttl).toBe(12 * 3600);
  });

  it.each([
    ['90s', 90],
    ['15m', 900],
    ['12h', 43_200],
    ['7d', 604_800],
  ])('reads decision_ttl %s as %i seconds', (ttl, seconds) => {
    expect(parseOrgFile(`decision_ttl: ${ttl}`).decision_ttl).toBe(seconds);
  });

  it('defaults decision_ttl to 7 days', () => {
    expect(parseOrgFile('').decision_ttl).toBe(604_800);
  });

  it.each([
    ['a decision_ttl without a unit', 'decision_ttl: 90', 'decision_ttl: must be a duration such as 90s, 15m, 12h or 7d'],
    ['a decision_ttl of zero', 'decision_ttl: 0s', 'decision_ttl: must be a duration such as 90s, 15m, 12h or 7d'],
    ['a decision_ttl in weeks', 'decision_ttl: 2w', 'decision_ttl: must be a duration such as 90s, 15m, 12h or 7d'],
    ['a decision_ttl over a year', 'decision_ttl: 400d', 'decision_ttl: must be at most a year'],
    ['hours without a timezone', rule('{ hours: "09:00-17:00" }'), 'rules.0.when.timezone: weekdays and hours need a timezone'],
    ['hours out of range', rule('{ hours: "09:00-25:00", timezone: UTC }'), 'rules.0.when.hours: must be a time range such as "09:00-17:00"'],
    ['hours without minutes', rule('{ hours: "9-17", timezone: UTC }'), 'rules.0.when.hours: must be a time range such as "09:00-17:00"'],
    ['an unknown timezone', rule('{ hours: "09:00-17:00", timezone: Mars/Olympus }'), 'rules.0.when.timezone: must be an IANA time zone name such as Europe/Berlin'],
    ['an unknown op', rule('{ input: { path: /amount, op: between, value: 1 } }'), 'rules.0.when.input'],
    ['a path that is no JSON Pointer', rule('{ input: { path: amount, op: gt, value: 1 } }'), 'rules.0.when.input'],
    ['in without a list', rule('{ input: { path: /channel, op: in, value: ops } }'), 'rules.0.when.input'],
    ['an unknown mode', rule('{ risk: high }', ', mode: dry'), 'rules.0.mode'],
    [
      'an unknown content action',
      'capabilities: [{ key: x, risk: low, connector: { kind: content, action: rm_rf } }]',
      'capabilities.0.connector.action: must be one of the content actions',
    ],
    [
      'an input schema ajv cannot compile',
      'capabilities: [{ key: x, risk: low, connector: { kind: webhook, url: "http://127.0.0.1/x" }, input_schema: { type: 12 } }]',
      'capabilities.0.input_schema: is not a usable JSON Schema',
    ],
  ])('refuses %s, saying where and why', (_name, text, problem) => {
    expect(problemsOf(text).join('\n')).toContain(problem);
  });
});

describe.each(engines)('learned rules beside the file on %s', (engine) => {
  let database: Database;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ database, close } = await openOrgDatabase(engine));
  });
  afterEach(() => close());

  it('stores decision_ttl, and keeps learned rules when the file is applied again with other rules', async () => {
    const first = `
people: [{ email: ada@example.com, name: Ada, role: owner }]
agents: [{ key: scribe, name: Scribe, autonomy: 1, responsible: ada@example.com }]
capabilities: [{ key: notify_team, risk: low, connector: { kind: webhook, url: "http://127.0.0.1/x" } }]
rules: [{ name: One, when: { risk: critical }, then: deny }]
decision_ttl: 15m
`;
    await applyOrgFile(database.db, parseOrgFile(first), {});
    expect(await database.db.select({ ttl: organization.decisionTtlSeconds }).from(organization)).toEqual([{ ttl: 900 }]);
    const [scribe] = await database.db.select().from(agents).where(eq(agents.key, 'scribe'));
    const [capability] = await database.db.select().from(capabilities);
    const [ada] = await database.db.select().from(people);
    const learned = await createLearnedRule(database.db, { agentId: scribe.id, capabilityId: capability.id, createdBy: ada.id, decisionId: 'dec_x' });

    await applyOrgFile(database.db, parseOrgFile(first.replace('name: One', 'name: Two').replace('15m', '90s')), {});
    const rules = await loadGateRules(database.db);
    expect(rules.map((item) => item.name)).toEqual(['Two', 'learned: allow notify_team']);
    expect(rules[1]).toMatchObject({ id: learned, then: 'allow', mode: 'enforce', when: { agent: scribe.id, capability: capability.id } });
    expect(await database.db.select({ ttl: organization.decisionTtlSeconds }).from(organization)).toEqual([{ ttl: 90 }]);
  });
});
