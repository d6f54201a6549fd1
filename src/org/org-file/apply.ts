/**
 * Applies an organization file (DESIGN 4.2) idempotently: everything it declares is created or brought
 * up to date, in one transaction; nothing it does not mention is deleted (people and spaces are never
 * removed by omission). Applying the same file twice changes nothing the second time.
 */
import path from 'node:path';
import { asc, eq, inArray, sql } from 'drizzle-orm';
import type { Db, Queryable } from '../../platform/database.js';
import { recordActivity } from '../activity/records.js';
import { upsertDeclaredAgent } from '../agents/records.js';
import { OrgFileError, type OrgFile } from './schema.js';
import { upsertPerson } from '../people/records.js';
import { replaceStandingRules } from '../rules/records.js';
import { agents, capabilities, organization, people } from '../schema.js';
import { passwordRule } from '../../config.js';
import type { UpsertOutcome } from '../../platform/upsert.js';
import { newId } from '../ids.js';
import { setSpaceMembers, upsertSpace } from '../spaces/records.js';
import { upsertCapability } from '../capabilities/catalogue.js';

/** The names (emails or keys) of what was created, updated or left unchanged, in the file's order. */
export type OutcomeNames = Record<UpsertOutcome, string[]>;

export interface ApplyReport {
  people: OutcomeNames;
  spaces: OutcomeNames;
  agents: OutcomeNames;
  capabilities: OutcomeNames;
  rules: { count: number; changed: boolean };
  /** Things applied with a caveat, such as a `password_env` or `secret_env` that is not set. */
  warnings: string[];
}

/** Serializes organization set-up across processes sharing one PostgreSQL database. */
const ORG_SETUP_LOCK = 7_406_127_401;

export async function lockOrgSetup(tx: Queryable): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${ORG_SETUP_LOCK})`);
}

export async function applyOrgFile(db: Db, file: OrgFile, env: NodeJS.ProcessEnv, source = 'organization file'): Promise<ApplyReport> {
  return db.transaction(async (tx) => {
    await lockOrgSetup(tx);
    return applyOrgFileIn(tx, file, env, source);
  });
}

/** The body of `applyOrgFile`, for callers that already hold the set-up lock in their own transaction. */
export async function applyOrgFileIn(tx: Queryable, file: OrgFile, env: NodeJS.ProcessEnv, source: string): Promise<ApplyReport> {
  const counts = (): OutcomeNames => ({ created: [], updated: [], unchanged: [] });
  const report: ApplyReport = {
    people: counts(),
    spaces: counts(),
    agents: counts(),
    capabilities: counts(),
    rules: { count: file.rules.length, changed: false },
    warnings: [],
  };
  const count = (bucket: OutcomeNames, outcome: UpsertOutcome, name: string) => void bucket[outcome].push(name);
  checkPasswords(file, env, source);
  report.warnings.push(...unsetSecrets(file, env));

  await ensureOrganization(tx, file.organization);
  await tx.update(organization).set({ decisionTtlSeconds: file.decision_ttl });

  for (const person of file.people) {
    let password: string | undefined;
    if (person.password_env) {
      password = env[person.password_env] || undefined;
      if (!password) report.warnings.push(`${person.password_env} is not set: the password of ${person.email} is left unchanged`);
    }
    count(report.people, (await upsertPerson(tx, { email: person.email, name: person.name, role: person.role, password })).outcome, person.email);
  }

  const personIds = await resolvePeople(tx, file, source);

  for (const declared of file.spaces) {
    const { space, outcome } = await upsertSpace(tx, { key: declared.key, name: declared.name });
    const membersChanged = await setSpaceMembers(tx, space.id, [...new Set(declared.members.map((email) => personIds.get(email)!))]);
    count(report.spaces, outcome === 'unchanged' && membersChanged ? 'updated' : outcome, declared.key);
  }

  for (const agent of file.agents) {
    const { outcome } = await upsertDeclaredAgent(tx, {
      key: agent.key,
      name: agent.name,
      description: agent.description,
      autonomy: agent.autonomy,
      responsiblePersonId: agent.responsible ? personIds.get(agent.responsible)! : null,
      budget: agent.budget ?? null,
      delivery: agent.delivery ?? null,
    });
    count(report.agents, outcome, agent.key);
  }

  for (const capability of file.capabilities) {
    const { outcome } = await upsertCapability(tx, {
      key: capability.key,
      name: capability.name ?? capability.key,
      description: capability.description,
      risk: capability.risk,
      cost: capability.cost,
      connector: capability.connector,
      inputSchema: capability.input_schema ?? null,
      enabled: capability.enabled,
    });
    count(report.capabilities, outcome, capability.key);
  }

  report.rules.changed = (await replaceStandingRules(tx, file.rules)).changed;
  await recordApplied(tx, report, source);
  return report;
}

/** One `org.applied` entry naming what the file created and updated; an apply that changed nothing records none. */
async function recordApplied(tx: Queryable, report: ApplyReport, source: string): Promise<void> {
  const sections = ['people', 'spaces', 'agents', 'capabilities'] as const;
  const pick = (outcome: 'created' | 'updated') =>
    Object.fromEntries(sections.filter((section) => report[section][outcome].length).map((section) => [section, report[section][outcome]]));
  const created = pick('created');
  const updated = pick('updated');
  if (!Object.keys(created).length && !Object.keys(updated).length && !report.rules.changed) return;
  const told = (names: Record<string, string[]>) => Object.entries(names).map(([section, list]) => `${list.length} ${section}`);
  const parts = [
    ...(Object.keys(created).length ? [`created ${told(created).join(', ')}`] : []),
    ...(Object.keys(updated).length ? [`updated ${told(updated).join(', ')}`] : []),
    ...(report.rules.changed ? [`replaced the rules (${report.rules.count})`] : []),
  ];
  await recordActivity(tx, {
    kind: 'org.applied',
    summary: `applied ${path.basename(source)}: ${parts.join('; ')}`,
    details: { source, created, updated, rules: report.rules },
  });
}

/** A password from `password_env` follows the rule of ATRIUM_ADMIN_PASSWORD; a weaker one refuses the whole file. */
function checkPasswords(file: OrgFile, env: NodeJS.ProcessEnv, source: string): void {
  const problems = file.people.flatMap((person) => {
    const value = person.password_env ? env[person.password_env] : undefined;
    if (!value) return [];
    const checked = passwordRule.safeParse(value);
    return checked.success ? [] : [`${person.password_env} (the password of ${person.email}) ${checked.error.issues[0]?.message}`];
  });
  if (problems.length) throw new OrgFileError(source, problems);
}

/** Each `secret_env` the file names that is not set: its webhook calls could not be signed. */
function unsetSecrets(file: OrgFile, env: NodeJS.ProcessEnv): string[] {
  return describeUnset(
    [
      ...file.agents.map((agent) => ({ variable: agent.delivery?.secret_env, user: `agent ${agent.key}` })),
      ...file.capabilities.filter((capability) => capability.enabled).map((capability) => ({
        variable: 'secret_env' in capability.connector ? capability.connector.secret_env : undefined,
        user: `capability ${capability.key}`,
      })),
    ],
    env,
  );
}

/**
 * Each `secret_env` the organization's agents and enabled capabilities name that is not set in `env`, however
 * they were made (a file applied at this start or earlier): every start warns about them, since an unsigned
 * delivery is refused and such a capability fails `connector_failed` before anyone is asked to approve it.
 */
export async function unsetSecretsInUse(db: Queryable, env: NodeJS.ProcessEnv): Promise<string[]> {
  const declared = await db.select({ key: agents.key, delivery: agents.delivery }).from(agents).where(eq(agents.kind, 'declared')).orderBy(asc(agents.key));
  const connected = await db
    .select({ key: capabilities.key, connector: capabilities.connector })
    .from(capabilities)
    .where(eq(capabilities.enabled, true))
    .orderBy(asc(capabilities.key));
  return describeUnset(
    [
      ...declared.map((agent) => ({ variable: typeof agent.delivery?.secret_env === 'string' ? agent.delivery.secret_env : undefined, user: `agent ${agent.key}` })),
      ...connected.map((capability) => ({ variable: ('secret_env' in capability.connector ? capability.connector.secret_env : undefined), user: `capability ${capability.key}` })),
    ],
    env,
  );
}

function describeUnset(named: Array<{ variable: string | undefined; user: string }>, env: NodeJS.ProcessEnv): string[] {
  return named
    .filter((entry): entry is { variable: string; user: string } => !!entry.variable && !env[entry.variable])
    .map((entry) => `${entry.variable} is not set: ${entry.user} cannot sign its webhook calls until it is`);
}

/** Creates the organization row on first use; the file's name and client autonomy win when given. */
export async function ensureOrganization(tx: Queryable, declared?: { name: string; client_autonomy: number }): Promise<{ created: boolean }> {
  const [existing] = await tx.select({ id: organization.id }).from(organization).limit(1);
  if (existing) {
    if (declared) {
      await tx
        .update(organization)
        .set({ name: declared.name, clientAutonomy: declared.client_autonomy, updatedAt: sql`now()` })
        .where(eq(organization.id, existing.id));
    }
    return { created: false };
  }
  await tx.insert(organization).values({
    id: newId('org'),
    name: declared?.name ?? 'My organization',
    clientAutonomy: declared?.client_autonomy ?? 1,
  });
  return { created: true };
}

/** Every email the file refers to (members, responsible) must be a person, declared here or already known. */
async function resolvePeople(tx: Queryable, file: OrgFile, source: string): Promise<Map<string, string>> {
  const referenced = new Set<string>([
    ...file.spaces.flatMap((space) => space.members),
    ...file.agents.flatMap((agent) => (agent.responsible ? [agent.responsible] : [])),
  ]);
  if (!referenced.size) return new Map();
  const rows = await tx.select({ id: people.id, email: people.email }).from(people).where(inArray(people.email, [...referenced]));
  const ids = new Map(rows.map((row) => [row.email, row.id]));
  const unknown = [...referenced].filter((email) => !ids.has(email));
  if (unknown.length) throw new OrgFileError(source, unknown.map((email) => `${email} is referenced but is not a person`));
  return ids;
}
