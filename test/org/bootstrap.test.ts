import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { asc, eq } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OrgConfig } from '../../src/config.js';
import { bootstrapOrganization } from '../../src/org/bootstrap.js';
import { authenticate, upsertPerson } from '../../src/org/people/records.js';
import { agents, organization, people, spaceMembers, spaces } from '../../src/org/schema.js';
import type { Database } from '../../src/platform/database.js';
import { engines } from '../helpers/databases.js';
import { openOrgDatabase } from '../helpers/org.js';

/** A logger that keeps what was said, to check what the operator is told. */
function recordingLogger() {
  const lines: { level: string; message: string; data: Record<string, unknown> }[] = [];
  const at = (level: string) => (data: Record<string, unknown>, message: string) => void lines.push({ level, message, data });
  const log = { warn: at('warn'), info: at('info'), error: at('error'), debug: at('debug') } as unknown as FastifyBaseLogger;
  return { log, lines };
}

describe.each(engines)('first start on %s', (engine) => {
  let database: Database;
  let close: () => Promise<void>;
  let dataDir: string;
  let config: OrgConfig;

  beforeEach(async () => {
    ({ database, close } = await openOrgDatabase(engine));
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-bootstrap-'));
    config = {
      host: '127.0.0.1',
      port: 0,
      publicUrl: 'http://localhost:8080',
      authPublicUrl: 'http://localhost:8080',
      database: { dataDir: 'memory://', schema: 'org' },
      dataDir,
      admin: {},
      cimdAllowLoopback: false,
      llm: {},
      logLevel: 'silent',
    };
  });
  afterEach(async () => {
    await close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const ownerRows = () => database.db.select({ email: people.email, role: people.role }).from(people).where(eq(people.role, 'owner'));

  it('creates the owner from ATRIUM_ADMIN_EMAIL / ATRIUM_ADMIN_PASSWORD, the General space and the assistant', async () => {
    config.admin = { email: 'boss@example.com', password: 'boss-password-1' };
    await bootstrapOrganization(database.db, config, recordingLogger().log, {});

    expect(await ownerRows()).toEqual([{ email: 'boss@example.com', role: 'owner' }]);
    expect(await authenticate(database.db, 'boss@example.com', 'boss-password-1')).toMatchObject({ role: 'owner' });
    const general = await database.db
      .select({ name: spaces.name, email: people.email })
      .from(spaces)
      .innerJoin(spaceMembers, eq(spaceMembers.spaceId, spaces.id))
      .innerJoin(people, eq(people.id, spaceMembers.personId));
    expect(general).toEqual([{ name: 'General', email: 'boss@example.com' }]);
    expect(await database.db.select({ key: agents.key, kind: agents.kind }).from(agents)).toEqual([{ key: 'assistant', kind: 'builtin' }]);
    expect(await database.db.select().from(organization)).toHaveLength(1);
  });

  it('without ATRIUM_ADMIN_*, creates admin@example.com with a generated password kept in the data dir, never logged', async () => {
    const file = path.join(dataDir, 'secrets', 'admin-password');
    const first = recordingLogger();
    await bootstrapOrganization(database.db, config, first.log, {});
    const stored = (await readFile(file, 'utf8')).trim();
    expect(stored.length).toBeGreaterThanOrEqual(32);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(first.lines)).not.toContain(stored);
    // Announced as information, naming both ways to change it.
    const howToChange = 'change it after signing in on http://localhost:8080/account, or with `npx atrium people set-password admin@example.com`';
    expect(first.lines.filter((line) => line.message.includes(file))).toEqual([
      expect.objectContaining({ level: 'info', data: { email: 'admin@example.com', file }, message: expect.stringContaining(howToChange) }),
    ]);
    expect(await authenticate(database.db, 'admin@example.com', stored)).toMatchObject({ role: 'owner' });

    // Every later start names the file again, never the password, while the password is unchanged.
    for (let start = 0; start < 2; start++) {
      const later = recordingLogger();
      await bootstrapOrganization(database.db, config, later.log, {});
      expect(JSON.stringify(later.lines)).not.toContain(stored);
      expect(later.lines.filter((line) => line.level === 'warn' && line.message.includes(file) && line.message.includes(howToChange))).toHaveLength(1);
    }
    expect(await ownerRows()).toHaveLength(1);
  });

  it('stops naming the password file, and removes it, once the owner changed the generated password', async () => {
    const file = path.join(dataDir, 'secrets', 'admin-password');
    await bootstrapOrganization(database.db, config, recordingLogger().log, {});
    await upsertPerson(database.db, { email: 'admin@example.com', name: 'Owner', role: 'owner', password: 'a-new-password-1' });
    const later = recordingLogger();
    await bootstrapOrganization(database.db, config, later.log, {});
    expect(later.lines.filter((line) => line.level === 'warn')).toEqual([]);
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await authenticate(database.db, 'admin@example.com', 'a-new-password-1')).not.toBeNull();
    const after = recordingLogger();
    await bootstrapOrganization(database.db, config, after.log, {});
    expect(after.lines).toEqual([]);
  });

  it('is idempotent across restarts and concurrent starts', async () => {
    config.admin = { email: 'boss@example.com', password: 'boss-password-1' };
    await Promise.all([1, 2, 3].map(() => bootstrapOrganization(database.db, config, recordingLogger().log, {})));
    await bootstrapOrganization(database.db, config, recordingLogger().log, {});
    expect(await database.db.select().from(people)).toHaveLength(1);
    expect(await database.db.select().from(spaces)).toHaveLength(1);
    expect(await database.db.select().from(agents)).toHaveLength(1);
    expect(await database.db.select().from(organization)).toHaveLength(1);
  });

  it('applies ATRIUM_ORG_FILE at start, and then creates no General space', async () => {
    const file = path.join(dataDir, 'org.yaml');
    await writeFile(
      file,
      `organization: { name: Example Co }
people: [{ email: ada@example.com, name: Ada, role: owner, password_env: ADA_PASSWORD }]
spaces: [{ key: web, name: Website, members: [ada@example.com] }]
`,
    );
    config.orgFile = file;
    await bootstrapOrganization(database.db, config, recordingLogger().log, { ADA_PASSWORD: 'ada-password-1' });

    expect(await database.db.select({ name: organization.name }).from(organization)).toEqual([{ name: 'Example Co' }]);
    expect(await ownerRows()).toEqual([{ email: 'ada@example.com', role: 'owner' }]);
    expect(await database.db.select({ key: spaces.key }).from(spaces).orderBy(asc(spaces.key))).toEqual([{ key: 'web' }]);
    expect(await authenticate(database.db, 'ada@example.com', 'ada-password-1')).not.toBeNull();
  });

  it('warns at every start, once each, about every secret_env in use that is not set, also after the file is gone', async () => {
    const file = path.join(dataDir, 'org.yaml');
    await writeFile(
      file,
      `agents: [{ key: scribe, name: Scribe, delivery: { kind: webhook, url: 'http://127.0.0.1:9/a', secret_env: SCRIBE_SECRET } }]
capabilities:
  - { key: notify, risk: low, connector: { kind: webhook, url: 'http://127.0.0.1:9/h', secret_env: HOOK_SECRET } }
  - { key: retired, risk: low, enabled: false, connector: { kind: webhook, url: 'http://127.0.0.1:9/r', secret_env: OLD_SECRET } }
`,
    );
    const expected = [
      'SCRIBE_SECRET is not set: agent scribe cannot sign its webhook calls until it is',
      'HOOK_SECRET is not set: capability notify cannot sign its webhook calls until it is',
    ];
    const warnings = (lines: ReturnType<typeof recordingLogger>['lines']) => lines.filter((line) => line.level === 'warn').map((line) => line.message);

    config.orgFile = file;
    const withFile = recordingLogger();
    await bootstrapOrganization(database.db, config, withFile.log, { HOOK_SECRET: '' });
    expect(warnings(withFile.lines)).toEqual(expected);

    // A later start without the file still knows what the organization uses.
    config.orgFile = undefined;
    const later = recordingLogger();
    await bootstrapOrganization(database.db, config, later.log, {});
    expect(warnings(later.lines).filter((message) => !message.includes('generated password'))).toEqual(expected);

    const set = recordingLogger();
    await bootstrapOrganization(database.db, config, set.log, { SCRIBE_SECRET: 'whsec_c2NyaWJl', HOOK_SECRET: 'whsec_aG9vaw' });
    expect(warnings(set.lines).filter((message) => !message.includes('generated password'))).toEqual([]);
  });

  it('refuses to start on an invalid organization file and writes nothing', async () => {
    const file = path.join(dataDir, 'org.yaml');
    await writeFile(file, 'people: [{ email: nope }]\n');
    config.orgFile = file;
    await expect(bootstrapOrganization(database.db, config, recordingLogger().log, {})).rejects.toThrow(/org\.yaml is invalid/);
    expect(await database.db.select().from(organization)).toEqual([]);
  });
});
