import { asc, eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyOrgFile } from '../../src/org/org-file/apply.js';
import { parseOrgFile } from '../../src/org/org-file/schema.js';
import { authenticate } from '../../src/org/people/records.js';
import { agents, capabilities, organization, people, spaceMembers, spaces, standingRules } from '../../src/org/schema.js';
import type { Database } from '../../src/platform/database.js';
import { engines } from '../helpers/databases.js';
import { openOrgDatabase } from '../helpers/org.js';
import { problemsOf } from '../helpers/org-file-problems.js';

/** The example of DESIGN 4.2, verbatim apart from a second person. */
const EXAMPLE = `
organization: { name: Example Co, client_autonomy: 1 }
people:
  - { email: ada@example.com, name: Ada, role: owner, password_env: ADA_PASSWORD }
  - { email: Bob@Example.com, name: Bob, role: member }
spaces:
  - { key: web, name: Website, members: [ada@example.com, bob@example.com] }
agents:
  - key: scribe
    name: Scribe
    description: Drafts and publishes website content
    autonomy: 2            # 0 observe, 1 propose, 2 act within rules, 3 trusted
    responsible: ada@example.com
    budget: 100            # units per calendar month
    delivery: { kind: webhook, url: http://127.0.0.1:9100/agent, secret_env: SCRIBE_SECRET }
capabilities:
  - key: publish_blog_post
    name: Publish a blog post on the website
    risk: high
    cost: 1
    connector: { kind: content, action: publish_blog_post }   # calls the content REST API
  - key: notify_team
    risk: low
    connector: { kind: webhook, url: http://127.0.0.1:9200/hook, secret_env: HOOK_SECRET }
    input_schema: { type: object, required: [text], properties: { text: { type: string } } }
rules:
  - { name: Critical needs a person, when: { risk: critical }, then: require_approval }
  - { name: No weekend deploys, when: { capability: deploy, weekdays: [sat, sun], timezone: Europe/Berlin }, then: deny }
`;

describe('parsing the organization file', () => {
  it('accepts the example of DESIGN 4.2 with people, spaces, agents, capabilities and rules', () => {
    const file = parseOrgFile(EXAMPLE);
    expect(file.organization).toEqual({ name: 'Example Co', client_autonomy: 1, approvals: {} });
    expect(file.people.map((person) => person.email)).toEqual(['ada@example.com', 'bob@example.com']);
    expect(file.people[1].role).toBe('member');
    expect(file.agents[0]).toMatchObject({ key: 'scribe', autonomy: 2, budget: 100, responsible: 'ada@example.com' });
    expect(file.capabilities[1]).toMatchObject({ key: 'notify_team', cost: 0, enabled: true });
    expect(file.rules[1]).toEqual({
      name: 'No weekend deploys',
      when: { capability: 'deploy', weekdays: ['sat', 'sun'], timezone: 'Europe/Berlin' },
      then: 'deny',
      mode: 'enforce',
    });
  });

  it('accepts an empty file', () => {
    expect(parseOrgFile('')).toMatchObject({ people: [], spaces: [], agents: [], capabilities: [], rules: [] });
  });

  it('names every problem with where it is', () => {
    const problems = problemsOf(`
people:
  - { email: not-an-email, name: X }
  - { email: a@example.com, name: A, role: boss }
agents:
  - { key: Bad Key, name: B, autonomy: 7 }
rules:
  - { name: R, when: { weekdays: [sat] }, then: deny }
  - { name: S, when: { timezone: Mars/Olympus }, then: maybe }
`);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^people\.0\.email: /),
        expect.stringMatching(/^people\.1\.role: /),
        expect.stringMatching(/^agents\.0\.key: /),
        expect.stringMatching(/^agents\.0\.autonomy: /),
        'rules.0.when.timezone: weekdays and hours need a timezone',
        expect.stringMatching(/^rules\.1\.when\.timezone: must be an IANA time zone/),
        expect.stringMatching(/^rules\.1\.then: /),
      ]),
    );
  });

  it('refuses unknown fields, so a typo is not silently ignored', () => {
    expect(problemsOf('people:\n  - { email: a@example.com, name: A, pasword_env: X }\n')).toEqual([
      expect.stringMatching(/^people\.0: .*pasword_env/),
    ]);
  });

  it('refuses duplicates and the reserved assistant key', () => {
    expect(
      problemsOf(`
spaces: [{ key: web, name: A }, { key: web, name: B }]
agents: [{ key: assistant, name: Mine }]
`),
    ).toEqual(['spaces.1: duplicate web', 'agents: the key "assistant" belongs to the built-in assistant']);
  });

  it('refuses YAML that does not parse', () => {
    expect(problemsOf('people: [')).toHaveLength(1);
  });
});

describe.each(engines)('applying the organization file on %s', (engine) => {
  let database: Database;
  let close: () => Promise<void>;
  const env = { ADA_PASSWORD: 'ada-password-1', SCRIBE_SECRET: 'whsec_c2NyaWJl', HOOK_SECRET: 'whsec_aG9vaw' };

  beforeEach(async () => {
    ({ database, close } = await openOrgDatabase(engine));
  });
  afterEach(() => close());

  it('creates everything the file declares', async () => {
    const report = await applyOrgFile(database.db, parseOrgFile(EXAMPLE), env);
    expect(report).toEqual({
      people: { created: ['ada@example.com', 'bob@example.com'], updated: [], adopted: [], unchanged: [] },
      spaces: { created: ['web'], updated: [], adopted: [], unchanged: [] },
      agents: { created: ['scribe'], updated: [], adopted: [], unchanged: [] },
      capabilities: { created: ['publish_blog_post', 'notify_team'], updated: [], adopted: [], unchanged: [] },
      event_endpoints: { created: [], updated: [], adopted: [], unchanged: [] },
      rules: { count: 2, changed: true, adopted: 0 },
      warnings: [],
    });
    const db = database.db;
    expect(await db.select({ name: organization.name }).from(organization)).toEqual([{ name: 'Example Co' }]);
    expect(await authenticate(db, 'ADA@example.com', 'ada-password-1')).toMatchObject({ name: 'Ada', role: 'owner' });
    expect(await authenticate(db, 'bob@example.com', '')).toBeNull();
    const members = await db
      .select({ email: people.email })
      .from(spaceMembers)
      .innerJoin(people, eq(people.id, spaceMembers.personId))
      .orderBy(asc(people.email));
    expect(members.map((member) => member.email)).toEqual(['ada@example.com', 'bob@example.com']);
    const [scribe] = await db.select().from(agents).where(eq(agents.key, 'scribe'));
    expect(scribe).toMatchObject({ kind: 'declared', autonomy: 2, budget: 100, delivery: { kind: 'webhook', secret_env: 'SCRIBE_SECRET' } });
    expect((await db.select().from(capabilities).orderBy(asc(capabilities.key))).map((c) => [c.key, c.risk, c.cost])).toEqual([
      ['notify_team', 'low', 0],
      ['publish_blog_post', 'high', 1],
    ]);
    expect((await db.select().from(standingRules).orderBy(asc(standingRules.position))).map((rule) => rule.then)).toEqual([
      'require_approval',
      'deny',
    ]);
  });

  it('is idempotent: the second application changes nothing and keeps ids', async () => {
    const file = parseOrgFile(EXAMPLE);
    await applyOrgFile(database.db, file, env);
    const snapshot = async () => ({
      people: await database.db.select().from(people).orderBy(asc(people.email)),
      spaces: await database.db.select({ id: spaces.id, key: spaces.key }).from(spaces),
      members: await database.db.select({ s: spaceMembers.spaceId, p: spaceMembers.personId }).from(spaceMembers),
      agents: await database.db.select({ id: agents.id, key: agents.key }).from(agents),
      rules: await database.db.select({ id: standingRules.id }).from(standingRules).orderBy(asc(standingRules.position)),
    });
    const before = await snapshot();
    const report = await applyOrgFile(database.db, file, env);
    for (const kind of ['people', 'spaces', 'agents', 'capabilities'] as const) {
      const names = file[kind].map((item) => ('email' in item ? item.email : item.key));
      expect(report[kind], kind).toEqual({ created: [], updated: [], adopted: [], unchanged: names });
    }
    expect(report.rules.changed).toBe(false);
    const after = await snapshot();
    expect(after.spaces).toEqual(before.spaces);
    expect(after.members).toEqual(before.members);
    expect(after.agents).toEqual(before.agents);
    expect(after.rules).toEqual(before.rules);
    // The same password is not re-hashed.
    expect(after.people.map((p) => p.passwordHash)).toEqual(before.people.map((p) => p.passwordHash));
  });

  it('reports a change as updated, and warns about every secret_env that is not set', async () => {
    await applyOrgFile(database.db, parseOrgFile(EXAMPLE), env);
    const report = await applyOrgFile(database.db, parseOrgFile(EXAMPLE.replace('name: Ada', 'name: Ada L.')), { ADA_PASSWORD: env.ADA_PASSWORD });
    expect(report.people).toEqual({ created: [], updated: ['ada@example.com'], adopted: [], unchanged: ['bob@example.com'] });
    expect(report.warnings).toEqual([
      'SCRIBE_SECRET is not set: agent scribe cannot sign its webhook calls until it is',
      'HOOK_SECRET is not set: capability notify_team cannot sign its webhook calls until it is',
    ]);
  });

  it('brings members up to date without deleting what the file no longer mentions', async () => {
    await applyOrgFile(database.db, parseOrgFile(EXAMPLE), env);
    await applyOrgFile(
      database.db,
      parseOrgFile('spaces:\n  - { key: web, name: Web site, members: [bob@example.com] }\n'),
      env,
    );
    const rows = await database.db
      .select({ name: spaces.name, email: people.email })
      .from(spaceMembers)
      .innerJoin(spaces, eq(spaces.id, spaceMembers.spaceId))
      .innerJoin(people, eq(people.id, spaceMembers.personId));
    expect(rows).toEqual([{ name: 'Web site', email: 'bob@example.com' }]);
    expect(await database.db.select({ email: people.email }).from(people)).toHaveLength(2);
  });

  it('refuses a member who is not a person, and applies nothing of that file', async () => {
    const file = parseOrgFile(`
people: [{ email: c@example.com, name: C }]
spaces: [{ key: ops, name: Ops, members: [nobody@example.com] }]
`);
    await expect(applyOrgFile(database.db, file, env, 'org.yaml')).rejects.toThrow(
      /nobody@example\.com is referenced but is not a person/,
    );
    expect(await database.db.select().from(people)).toEqual([]);
  });

  it('warns and keeps the password when password_env is not set', async () => {
    await applyOrgFile(database.db, parseOrgFile(EXAMPLE), env);
    const report = await applyOrgFile(database.db, parseOrgFile(EXAMPLE), { ...env, ADA_PASSWORD: '' });
    expect(report.warnings).toEqual(['ADA_PASSWORD is not set: the password of ada@example.com is left unchanged']);
    expect(await authenticate(database.db, 'ada@example.com', 'ada-password-1')).not.toBeNull();
  });
});
