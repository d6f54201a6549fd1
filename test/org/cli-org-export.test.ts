/**
 * `npx atrium org export [FILE]` (issue 20 item 2): the organization as it is — what a file declared and what the
 * console made — written as an organization file that `org apply` takes back with no change: nothing created or
 * updated (the console's records are adopted by the file), and an export of the result equal byte for byte.
 * Secrets never appear in it: no password_env, no generated signing secret (a comment says so).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createAgent, setAgentStatus } from '../../src/org/agents/manage.js';
import { createCapability } from '../../src/org/capabilities/manage.js';
import { newId } from '../../src/org/ids.js';
import { applyOrgFile, type ApplyReport } from '../../src/org/org-file/apply.js';
import { asDuration, exportOrgFile } from '../../src/org/org-file/export.js';
import { orgFileSchema, parseOrgFile } from '../../src/org/org-file/schema.js';
import { upsertPerson } from '../../src/org/people/records.js';
import { eventEndpoints, standingRules } from '../../src/org/schema.js';
import { addSpaceMember, upsertSpace } from '../../src/org/spaces/records.js';
import type { Database } from '../../src/platform/database.js';
import { createScratchDatabase, engines } from '../helpers/databases.js';
import { openOrgDatabase } from '../helpers/org.js';

const RICH = `
organization: { name: Export Co, client_autonomy: 2, approvals: { critical: 2 } }
people:
  - { email: ada@example.com, name: Ada Lovelace, role: owner, password_env: EXPORT_ADA_PASSWORD }
  - { email: bob@example.com, name: "Bob: the builder", role: admin }
  - { email: cy@example.com, name: Cy, role: member }
spaces:
  - { key: web, name: Website, members: [ada@example.com, cy@example.com] }
  - { key: empty, name: Nobody here }
agents:
  - key: scribe
    name: Scribe
    description: "Writes posts.\\nTwo lines, with: colons # and hashes"
    autonomy: 2
    responsible: ada@example.com
    budget: 500
    delivery: { kind: webhook, url: "https://agents.example.com/scribe?x=1", secret_env: SCRIBE_SECRET }
  - { key: poller, name: Poller, autonomy: 0 }
capabilities:
  - { key: publish_blog_post, name: Publish a post, risk: high, cost: 1, connector: { kind: content, action: publish_blog_post } }
  - key: refund
    risk: critical
    cost: 10
    description: Refunds a customer
    connector: { kind: webhook, url: "https://pay.example.com/refund", secret_env: REFUND_SECRET }
    input_schema: { type: object, required: [amount], properties: { amount: { type: number, maximum: 1000 }, note: { type: string } } }
  - { key: retired, risk: low, enabled: false, connector: { kind: webhook, url: "http://legacy.example.com/hook" } }
rules:
  - { name: Scribe posts in office hours, when: { agent: scribe, capability: publish_blog_post, weekdays: [mon, tue, wed], hours: "09:00-17:00", timezone: Europe/Berlin }, then: allow }
  - { name: Large refunds, when: { capability: refund, input: [{ path: /amount, op: gt, value: 100 }, { path: /note, op: in, value: [a, b] }] }, then: require_approval, approvals: 3 }
  - { name: Trial, when: { risk: [high, critical] }, then: deny, mode: shadow }
event_endpoints:
  - { key: chat, url: "https://chat.example.com/hook", events: [decision.pending, decision.resolved], secret_env: CHAT_SECRET }
decision_ttl: 36h
`;

const quiet = (report: ApplyReport) =>
  Object.fromEntries((['people', 'spaces', 'agents', 'capabilities', 'event_endpoints'] as const).map((section) => [section, [...report[section].created, ...report[section].updated]]));

describe.each(engines)('org export on %s', (engine) => {
  let database: Database;
  let close: () => Promise<void>;

  beforeEach(async () => {
    ({ database, close } = await openOrgDatabase(engine));
  });
  afterEach(async () => {
    await close();
  });

  it('writes the file and the console\'s records so that applying it changes nothing, and a second export is the same bytes', async () => {
    const first = await applyOrgFile(database.db, parseOrgFile(RICH), { EXPORT_ADA_PASSWORD: 'ada-password-1' }, 'rich.yaml');
    expect(first.agents.created).toEqual(['scribe', 'poller']);
    // What the console made: a person, a space with a member, an agent with a generated secret (then disabled),
    // one with secret_env, a capability with a generated secret, and a standing rule.
    const { person: dee } = await upsertPerson(database.db, { email: 'dee@example.com', name: 'Dee', role: 'member', password: 'dee-password-1' });
    const { space } = await upsertSpace(database.db, { key: 'ops', name: 'Ops' });
    await addSpaceMember(database.db, space.id, dee.id);
    await database.db.transaction(async (tx) => {
      const scout = await createAgent(tx, 'scout', { name: 'Scout', description: 'Looks around', autonomy: 3, responsiblePersonId: dee.id, budget: 0, deliveryUrl: 'https://scout.example.com/hook', secret: { kind: 'generate' } }, dee.id);
      await setAgentStatus(tx, scout.id, 'disabled', dee.id, 'rich.yaml');
      await createAgent(tx, 'named', { name: 'Named', description: '', autonomy: 1, responsiblePersonId: null, budget: null, deliveryUrl: 'https://named.example.com/hook', secret: { kind: 'env', name: 'NAMED_SECRET' } }, dee.id);
      await createCapability(tx, 'wire', { name: 'Wire money', description: '', risk: 'medium', cost: 0, connector: { kind: 'webhook', url: 'https://bank.example.com/wire', secret: { kind: 'generate' } }, inputSchema: { type: 'object' } }, dee.id);
      await tx.insert(standingRules).values({ id: newId('rul'), position: 3, name: 'Console rule', when: { agent: 'scout' }, then: 'deny', mode: 'enforce', managedBy: 'console' });
      await tx.insert(eventEndpoints).values({ id: newId('ep'), key: 'pager', url: 'https://pager.example.com/in', signingSecret: `whsec_${'A'.repeat(43)}=`, managedBy: 'console' });
    });

    const exported = await exportOrgFile(database.db);
    expect(orgFileSchema.safeParse(parseYaml(exported)).success).toBe(true);
    const file = parseOrgFile(exported);
    expect(file.organization).toEqual({ name: 'Export Co', client_autonomy: 2, approvals: { critical: 2 } });
    expect(file.rules.find((rule) => rule.name === 'Large refunds')?.approvals).toBe(3);
    expect(file.event_endpoints.map((endpoint) => [endpoint.key, endpoint.secret_env, endpoint.events])).toEqual([
      ['chat', 'CHAT_SECRET', ['decision.pending', 'decision.resolved']],
      ['pager', undefined, []],
    ]);
    expect(file.decision_ttl).toBe(36 * 3600);
    expect(exported).toContain('decision_ttl: 36h');
    expect(file.people.map((person) => person.email)).toEqual(['ada@example.com', 'bob@example.com', 'cy@example.com', 'dee@example.com']);
    expect(file.spaces).toEqual([
      { key: 'empty', name: 'Nobody here', members: [] },
      { key: 'ops', name: 'Ops', members: ['dee@example.com'] },
      { key: 'web', name: 'Website', members: ['ada@example.com', 'cy@example.com'] },
    ]);
    expect(file.agents.map((agent) => agent.key)).toEqual(['named', 'poller', 'scout', 'scribe']);
    expect(file.agents.find((agent) => agent.key === 'named')!.delivery).toEqual({ kind: 'webhook', url: 'https://named.example.com/hook', secret_env: 'NAMED_SECRET' });
    expect(file.capabilities.find((capability) => capability.key === 'refund')!.input_schema).toEqual(parseOrgFile(RICH).capabilities[1].input_schema);
    expect(file.rules.map((rule) => rule.name)).toEqual(['Scribe posts in office hours', 'Large refunds', 'Trial', 'Console rule']);
    // Secrets stay out: no password, no password_env, no generated secret — a comment says where those are.
    expect(exported).not.toMatch(/whsec_|password_env:|scrypt/);
    expect(exported).toMatch(/ {2}# Its deliveries are signed with a secret the server generated, which is never written here.*\n {2}# Disabled on the console.*\n {2}- key: scout/);
    expect(exported).toMatch(/ {2}# Its calls are signed with a secret the server generated.*\n {2}- key: wire/);

    const back = await applyOrgFile(database.db, parseOrgFile(exported), {}, 'exported.yaml');
    expect(quiet(back)).toEqual({ people: [], spaces: [], agents: [], capabilities: [], event_endpoints: [] });
    expect(back.event_endpoints.adopted).toEqual(['pager']);
    expect(back.people.adopted).toEqual(['dee@example.com']);
    expect(back.spaces.adopted).toEqual(['ops']);
    expect(back.agents.adopted).toEqual(['named', 'scout']);
    expect(back.capabilities.adopted).toEqual(['wire']);
    expect(back.rules).toEqual({ count: 4, changed: false, adopted: 1 });
    expect(await exportOrgFile(database.db)).toBe(exported);

    const again = await applyOrgFile(database.db, parseOrgFile(exported), {}, 'exported.yaml');
    expect([again.people, again.spaces, again.agents, again.capabilities].map((outcomes) => outcomes.unchanged.length)).toEqual([4, 3, 4, 4]);
    expect(quiet(again)).toEqual({ people: [], spaces: [], agents: [], capabilities: [], event_endpoints: [] });
    expect([...again.people.adopted, ...again.agents.adopted, ...again.capabilities.adopted, ...again.spaces.adopted]).toEqual([]);
    expect(again.rules).toEqual({ count: 4, changed: false, adopted: 0 });
  });

  it('writes an organization made by the first start alone, and writes decision_ttl in its largest exact unit', async () => {
    await applyOrgFile(database.db, parseOrgFile(''), {}, 'empty.yaml');
    const exported = await exportOrgFile(database.db);
    expect(parseOrgFile(exported)).toMatchObject({ organization: { name: 'My organization', client_autonomy: 1 }, people: [], decision_ttl: 604_800 });
    expect([90, 900, 7200, 86_400 * 3, 3601].map(asDuration)).toEqual(['90s', '15m', '2h', '3d', '3601s']);
  });
});

describe.each(engines)('atrium org export on %s', (engine) => {
  const run = promisify(execFile);
  const cli = path.resolve('bin/atrium.js');
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-export-'));
    env = { PATH: process.env.PATH, HOME: process.env.HOME, ATRIUM_DATA_DIR: path.join(dir, 'data'), EXPORT_ADA_PASSWORD: 'ada-password-1' };
    if (engine === 'postgres') {
      const scratch = await createScratchDatabase();
      env.ORG_DATABASE_URL = scratch.url;
      dropDatabase = scratch.drop;
    }
    await writeFile(path.join(dir, 'org.yaml'), RICH);
  });
  afterAll(async () => {
    await dropDatabase?.();
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the file on standard output, or writes it to FILE; applying it changes nothing', { timeout: 180_000 }, async () => {
    await run('node', [cli, 'org', 'apply', path.join(dir, 'org.yaml')], { env });
    const printed = await run('node', [cli, 'org', 'export'], { env });
    expect(parseOrgFile(printed.stdout).agents.map((agent) => agent.key)).toEqual(['poller', 'scribe']);
    const target = path.join(dir, 'exported.yaml');
    const written = await run('node', [cli, 'org', 'export', target], { env });
    expect(written.stdout.trim()).toBe(`wrote the organization to ${target}`);
    expect(await readFile(target, 'utf8')).toBe(printed.stdout);
    const applied = await run('node', [cli, 'org', 'apply', target], { env });
    expect(applied.stdout).toContain('people: 0 created, 0 updated, 3 unchanged');
    expect(applied.stdout).toContain('agents: 0 created, 0 updated, 2 unchanged (poller, scribe)');
    expect(applied.stdout).toContain('capabilities: 0 created, 0 updated, 3 unchanged');
    expect(applied.stdout).toContain('rules: 3 (unchanged)');
  });
});
