/**
 * The file and the console agree (issue 20 item 2): `org apply` marks every person, space, agent and capability it
 * declares as the file's, takes over a console record it declares (`adopted` when otherwise unchanged, `updated` when
 * it changes it too), and never removes or changes what it does not declare; re-applying replaces only the file's
 * own standing rules, keeps the console's after them, and keeps the ids of rules declared again unchanged.
 */
import { asc, eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/org/agents/manage.js';
import { createCapability } from '../../src/org/capabilities/manage.js';
import { newId } from '../../src/org/ids.js';
import { applyOrgFile, unsetSecretsInUse } from '../../src/org/org-file/apply.js';
import { parseOrgFile } from '../../src/org/org-file/schema.js';
import { upsertPerson } from '../../src/org/people/records.js';
import { agents, capabilities, orgActivity, people, spaces, standingRules } from '../../src/org/schema.js';
import { upsertSpace } from '../../src/org/spaces/records.js';
import type { Database } from '../../src/platform/database.js';
import { engines } from '../helpers/databases.js';
import { openOrgDatabase } from '../helpers/org.js';

const FILE = `
organization: { name: Managed Co }
people:
  - { email: ada@example.com, name: Ada, role: owner }
spaces:
  - { key: web, name: Website, members: [ada@example.com] }
agents:
  - { key: scribe, name: Scribe, autonomy: 2, responsible: ada@example.com }
capabilities:
  - { key: notify, risk: low, connector: { kind: webhook, url: "https://hooks.example.com/notify" } }
rules:
  - { name: No critical, when: { risk: critical }, then: deny }
  - { name: Watch notify, when: { capability: notify }, then: require_approval, mode: shadow }
`;

describe.each(engines)('records managed by the organization file on %s', (engine) => {
  let database: Database;
  let close: () => Promise<void>;
  let consoleIds: { person: string; agent: string; capability: string; space: string; rule: string };

  const apply = (text: string) => applyOrgFile(database.db, parseOrgFile(text), {}, 'org.yaml');
  const managed = async () => ({
    people: await database.db.select({ email: people.email, managedBy: people.managedBy }).from(people).orderBy(asc(people.email)),
    spaces: await database.db.select({ key: spaces.key, managedBy: spaces.managedBy }).from(spaces).orderBy(asc(spaces.key)),
    agents: await database.db.select({ key: agents.key, managedBy: agents.managedBy }).from(agents).orderBy(asc(agents.key)),
    capabilities: await database.db.select({ key: capabilities.key, managedBy: capabilities.managedBy }).from(capabilities).orderBy(asc(capabilities.key)),
  });
  const rules = () =>
    database.db.select({ id: standingRules.id, name: standingRules.name, position: standingRules.position, managedBy: standingRules.managedBy }).from(standingRules).orderBy(asc(standingRules.position));
  const consoleRows = async () => ({
    person: await database.db.select().from(people).where(eq(people.id, consoleIds.person)),
    agent: await database.db.select().from(agents).where(eq(agents.id, consoleIds.agent)),
    capability: await database.db.select().from(capabilities).where(eq(capabilities.id, consoleIds.capability)),
    space: await database.db.select().from(spaces).where(eq(spaces.id, consoleIds.space)),
    rule: await database.db.select().from(standingRules).where(eq(standingRules.id, consoleIds.rule)),
  });

  beforeEach(async () => {
    ({ database, close } = await openOrgDatabase(engine));
    await apply(FILE);
    // What the console made: a person, a space, an agent with a generated secret, a capability and a standing rule.
    const { person: bo } = await upsertPerson(database.db, { email: 'bo@example.com', name: 'Bo', role: 'member' });
    const { space } = await upsertSpace(database.db, { key: 'ops', name: 'Ops' });
    const agent = await database.db.transaction((tx) =>
      createAgent(tx, 'scout', { name: 'Scout', description: '', autonomy: 1, responsiblePersonId: bo.id, budget: 10, deliveryUrl: 'https://scout.example.com/hook', secret: { kind: 'generate' } }, bo.id),
    );
    const capability = await database.db.transaction((tx) =>
      createCapability(tx, 'wire', { name: 'Wire', description: '', risk: 'high', cost: 3, connector: { kind: 'webhook', url: 'https://bank.example.com/wire', secret: { kind: 'generate' } }, inputSchema: null }, bo.id),
    );
    const rule = newId('rul');
    await database.db.insert(standingRules).values({ id: rule, position: 2, name: 'Console: deny wires at night', when: { capability: 'wire', hours: '22:00-06:00', timezone: 'UTC' }, then: 'deny', mode: 'enforce', managedBy: 'console' });
    consoleIds = { person: bo.id, agent: agent.id, capability: capability.id, space: space.id, rule };
  });
  afterEach(async () => {
    await close();
  });

  it('marks everything the file declares as the file\'s, and what the console made as the console\'s', async () => {
    expect(await managed()).toEqual({
      people: [
        { email: 'ada@example.com', managedBy: 'file' },
        { email: 'bo@example.com', managedBy: 'console' },
      ],
      spaces: [
        { key: 'ops', managedBy: 'console' },
        { key: 'web', managedBy: 'file' },
      ],
      agents: [
        { key: 'scout', managedBy: 'console' },
        { key: 'scribe', managedBy: 'file' },
      ],
      capabilities: [
        { key: 'notify', managedBy: 'file' },
        { key: 'wire', managedBy: 'console' },
      ],
    });
    expect((await rules()).map((rule) => [rule.name, rule.managedBy])).toEqual([
      ['No critical', 'file'],
      ['Watch notify', 'file'],
      ['Console: deny wires at night', 'console'],
    ]);
  });

  it('re-applies the same file without touching anything the console made', async () => {
    const before = await consoleRows();
    const fileRules = await rules();
    const report = await apply(FILE);
    for (const section of ['people', 'spaces', 'agents', 'capabilities'] as const) {
      expect(report[section].created, section).toEqual([]);
      expect(report[section].updated, section).toEqual([]);
      expect(report[section].adopted, section).toEqual([]);
    }
    expect(report.rules).toEqual({ count: 2, changed: false, adopted: 0 });
    expect(await consoleRows()).toEqual(before);
    expect(await rules()).toEqual(fileRules);
  });

  it('replaces only the file\'s rules, keeps the ones declared again (and their ids), and keeps the console\'s after them', async () => {
    const [noCritical] = await rules();
    const report = await apply(FILE.replace('  - { name: Watch notify, when: { capability: notify }, then: require_approval, mode: shadow }\n', '  - { name: Weekends off, when: { weekdays: [sat, sun], timezone: UTC }, then: deny }\n'));
    expect(report.rules).toEqual({ count: 2, changed: true, adopted: 0 });
    const after = await rules();
    expect(after.map((rule) => [rule.name, rule.managedBy, rule.position])).toEqual([
      ['No critical', 'file', 0],
      ['Weekends off', 'file', 1],
      ['Console: deny wires at night', 'console', 2],
    ]);
    expect(after[0].id).toBe(noCritical.id);
    expect(after[2].id).toBe(consoleIds.rule);
    // A file with no rules at all leaves the console's.
    await apply(FILE.replace(/rules:[\s\S]*$/, ''));
    expect((await rules()).map((rule) => [rule.name, rule.position])).toEqual([['Console: deny wires at night', 0]]);
  });

  it('takes over a console record it declares: adopted when otherwise unchanged, updated when changed too', async () => {
    const before = await consoleRows();
    // The file of before, declaring Bo, Scout (with another autonomy), Wire and the console's rule as the console left them.
    const report = await apply(`
organization: { name: Managed Co }
people:
  - { email: ada@example.com, name: Ada, role: owner }
  - { email: bo@example.com, name: Bo, role: member }
spaces:
  - { key: web, name: Website, members: [ada@example.com] }
agents:
  - { key: scribe, name: Scribe, autonomy: 2, responsible: ada@example.com }
  - { key: scout, name: Scout, autonomy: 3, budget: 10, responsible: bo@example.com, delivery: { kind: webhook, url: "https://scout.example.com/hook" } }
capabilities:
  - { key: notify, risk: low, connector: { kind: webhook, url: "https://hooks.example.com/notify" } }
  - { key: wire, name: Wire, risk: high, cost: 3, connector: { kind: webhook, url: "https://bank.example.com/wire" } }
rules:
  - { name: No critical, when: { risk: critical }, then: deny }
  - { name: Watch notify, when: { capability: notify }, then: require_approval, mode: shadow }
  - { name: "Console: deny wires at night", when: { capability: wire, hours: "22:00-06:00", timezone: UTC }, then: deny }
`);
    expect(report.people.adopted).toEqual(['bo@example.com']);
    expect(report.capabilities.adopted).toEqual(['wire']);
    // Scout's autonomy differs from the console's 1: taken over and changed, so reported as updated.
    expect(report.agents.updated).toEqual(['scout']);
    expect(report.agents.adopted).toEqual([]);
    expect(report.rules).toEqual({ count: 3, changed: false, adopted: 1 });
    const after = await consoleRows();
    expect(after.capability[0]).toMatchObject({ managedBy: 'file', signingSecret: before.capability[0].signingSecret, connector: before.capability[0].connector });
    // The file names no secret_env, so the generated secret keeps signing the adopted agent's deliveries.
    expect(after.agent[0]).toMatchObject({ managedBy: 'file', autonomy: 3, signingSecret: before.agent[0].signingSecret });
    expect(after.rule[0]).toMatchObject({ managedBy: 'file', position: 2 });
    expect(await database.db.select({ id: standingRules.id }).from(standingRules)).toHaveLength(3);
    const entries = await database.db.select({ summary: orgActivity.summary }).from(orgActivity).where(eq(orgActivity.kind, 'org.applied'));
    expect(entries.map((entry) => entry.summary)).toContain('applied org.yaml: updated 1 agents; took over 1 people, 1 capabilities from the console; took over 1 console rule');
  });

  it('warns at start about an agent that cannot sign its deliveries, not about one signing with a generated secret', async () => {
    expect(await unsetSecretsInUse(database.db, {})).toEqual([]);
    await apply(FILE.replace('agents:\n', 'agents:\n  - { key: mute, name: Mute, delivery: { kind: webhook, url: "https://mute.example.com/hook" } }\n'));
    expect(await unsetSecretsInUse(database.db, {})).toEqual([
      'agent mute has a delivery but no signing secret, so it receives no work: name one with delivery.secret_env, or generate one on its console page',
    ]);
  });
});
