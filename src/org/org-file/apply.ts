/**
 * Applies an organization file (DESIGN 4.2) idempotently: everything it declares is created or brought
 * up to date, in one transaction; nothing it does not mention is deleted or changed (people and spaces are
 * never removed by omission, and what the console made stays as the console left it). Applying the same
 * file twice changes nothing the second time.
 *
 * Every person, space, agent and capability the file declares is managed by it (`managed_by = 'file'`): the
 * console shows it as "from org.yaml" and no longer edits it. A file that declares a record the console made
 * takes it over; the report calls that `adopted` when the file left its fields as they were (the round trip of
 * `org export`), and `updated` when it also changed them — a change to the record is what an operator must see.
 */
import path from 'node:path';
import { and, asc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import { queryRows, type Queryable } from '../../platform/database.js';
import { recordActivity } from '../activity/records.js';
import { upsertDeclaredAgent } from '../agents/records.js';
import { OrgFileError, type OrgFile } from './schema.js';
import { upsertPerson } from '../people/records.js';
import { replaceStandingRules } from '../rules/records.js';
import { agents, capabilities, eventEndpoints, organization, people, spaces } from '../schema.js';
import { passwordRule } from '../../config.js';
import type { UpsertOutcome } from '../../platform/upsert.js';
import { newId } from '../ids.js';
import { setSpaceMembers, upsertSpace } from '../spaces/records.js';
import { upsertCapability } from '../capabilities/catalogue.js';
import { upsertDeclaredEndpoint } from '../events/endpoints.js';
import type { Risk } from '../gate/types.js';

/** What applying did to one declared record: an upsert's outcome, or `adopted` (taken over from the console, otherwise unchanged). */
export type ApplyOutcome = UpsertOutcome | 'adopted';

/** The names (emails or keys) of what was created, updated, adopted or left unchanged, in the file's order. */
export type OutcomeNames = Record<ApplyOutcome, string[]>;

export interface ApplyReport {
  people: OutcomeNames;
  spaces: OutcomeNames;
  agents: OutcomeNames;
  capabilities: OutcomeNames;
  event_endpoints: OutcomeNames;
  /** `changed`: the file's own rules changed; `adopted`: console rules equal to declared ones it took over instead of copying. */
  rules: { count: number; changed: boolean; adopted: number };
  /** Things applied with a caveat, such as a `password_env` or `secret_env` that is not set. */
  warnings: string[];
}

/** Serializes organization set-up across processes sharing one PostgreSQL database. */
const ORG_SETUP_LOCK = 7_406_127_401;

export async function lockOrgSetup(tx: Queryable): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${ORG_SETUP_LOCK})`);
}

export async function applyOrgFile(db: Queryable, file: OrgFile, env: NodeJS.ProcessEnv, source = 'organization file'): Promise<ApplyReport> {
  return db.transaction(async (tx) => {
    await lockOrgSetup(tx);
    return applyOrgFileIn(tx, file, env, source);
  });
}

/** The body of `applyOrgFile`, for callers that already hold the set-up lock in their own transaction. */
export async function applyOrgFileIn(tx: Queryable, file: OrgFile, env: NodeJS.ProcessEnv, source: string): Promise<ApplyReport> {
  const counts = (): OutcomeNames => ({ created: [], updated: [], adopted: [], unchanged: [] });
  const report: ApplyReport = {
    people: counts(),
    spaces: counts(),
    agents: counts(),
    capabilities: counts(),
    event_endpoints: counts(),
    rules: { count: file.rules.length, changed: false, adopted: 0 },
    warnings: [],
  };
  /** Files the record under its outcome, after taking it over from the console when the console made it. */
  const count = async (bucket: OutcomeNames, outcome: UpsertOutcome, name: string, claim: SQL) => {
    const adopted = await claimForFile(tx, claim);
    bucket[adopted && outcome === 'unchanged' ? 'adopted' : outcome].push(name);
  };
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
    const { outcome } = await upsertPerson(tx, { email: person.email, name: person.name, role: person.role, password });
    await count(report.people, outcome, person.email, sql`${people} SET managed_by = 'file' WHERE email = ${person.email}`);
  }

  const personIds = await resolvePeople(tx, file, source);

  for (const declared of file.spaces) {
    const { space, outcome } = await upsertSpace(tx, { key: declared.key, name: declared.name });
    const membersChanged = await setSpaceMembers(tx, space.id, [...new Set(declared.members.map((email) => personIds.get(email)!))]);
    await count(report.spaces, outcome === 'unchanged' && membersChanged ? 'updated' : outcome, declared.key, sql`${spaces} SET managed_by = 'file' WHERE id = ${space.id}`);
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
    await count(report.agents, outcome, agent.key, sql`${agents} SET managed_by = 'file' WHERE key = ${agent.key}`);
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
    await count(report.capabilities, outcome, capability.key, sql`${capabilities} SET managed_by = 'file' WHERE key = ${capability.key}`);
  }

  // Upserted by key and never deleted by omission: endpoints made on the console stay.
  for (const endpoint of file.event_endpoints) {
    await count(report.event_endpoints, await upsertDeclaredEndpoint(tx, endpoint), endpoint.key, sql`${eventEndpoints} SET managed_by = 'file' WHERE key = ${endpoint.key}`);
  }

  Object.assign(report.rules, await replaceStandingRules(tx, file.rules));
  await recordApplied(tx, report, source);
  return report;
}

/**
 * `UPDATE <claim> AND managed_by = 'console'`: marks a declared record as the file's; true when the console had
 * made it (the file takes it over), false when it was the file's already.
 */
async function claimForFile(tx: Queryable, claim: SQL): Promise<boolean> {
  const rows = await queryRows<{ id: string }>(tx, sql`UPDATE ${claim} AND managed_by = 'console' RETURNING id`);
  return rows.length > 0;
}

/** One `org.applied` entry naming what the file created and updated; an apply that changed nothing records none. */
async function recordApplied(tx: Queryable, report: ApplyReport, source: string): Promise<void> {
  const sections = ['people', 'spaces', 'agents', 'capabilities', 'event_endpoints'] as const;
  const pick = (outcome: 'created' | 'updated' | 'adopted') =>
    Object.fromEntries(sections.filter((section) => report[section][outcome].length).map((section) => [section, report[section][outcome]]));
  const created = pick('created');
  const updated = pick('updated');
  const adopted = pick('adopted');
  const rulesMoved = report.rules.changed || report.rules.adopted > 0;
  if (!Object.keys(created).length && !Object.keys(updated).length && !Object.keys(adopted).length && !rulesMoved) return;
  const told = (names: Record<string, string[]>) => Object.entries(names).map(([section, list]) => `${list.length} ${section}`);
  const parts = [
    ...(Object.keys(created).length ? [`created ${told(created).join(', ')}`] : []),
    ...(Object.keys(updated).length ? [`updated ${told(updated).join(', ')}`] : []),
    ...(Object.keys(adopted).length ? [`took over ${told(adopted).join(', ')} from the console`] : []),
    ...(report.rules.changed ? [`replaced the rules (${report.rules.count})`] : []),
    ...(report.rules.adopted ? [`took over ${report.rules.adopted} console rule${report.rules.adopted === 1 ? '' : 's'}`] : []),
  ];
  await recordActivity(tx, {
    kind: 'org.applied',
    summary: `applied ${path.basename(source)}: ${parts.join('; ')}`,
    details: { source, created, updated, adopted, rules: report.rules },
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
      ...file.event_endpoints.filter((endpoint) => endpoint.enabled).map((endpoint) => ({ variable: endpoint.secret_env, user: `event endpoint ${endpoint.key}` })),
    ],
    env,
  );
}

/**
 * Each `secret_env` the organization's agents, enabled capabilities and enabled event endpoints name that is not set in `env`, however
 * they were made (a file applied at this start or earlier, or the console): every start warns about them, since an
 * unsigned delivery is refused and such a capability fails `connector_failed` before anyone is asked to approve it.
 * A secret the server generated (set up on the console) needs no variable; an agent with a delivery but neither is
 * named too, as it receives no work.
 */
export async function unsetSecretsInUse(db: Queryable, env: NodeJS.ProcessEnv): Promise<string[]> {
  const declared = await db
    .select({ key: agents.key, delivery: agents.delivery, generated: sql<boolean>`${agents.signingSecret} IS NOT NULL` })
    .from(agents)
    .where(eq(agents.kind, 'declared'))
    .orderBy(asc(agents.key));
  const connected = await db
    .select({ key: capabilities.key, connector: capabilities.connector })
    .from(capabilities)
    .where(eq(capabilities.enabled, true))
    .orderBy(asc(capabilities.key));
  const endpoints = await db
    .select({ key: eventEndpoints.key, secretEnv: eventEndpoints.secretEnv })
    .from(eventEndpoints)
    .where(and(eq(eventEndpoints.enabled, true), isNull(eventEndpoints.signingSecret)))
    .orderBy(asc(eventEndpoints.key));
  const variableOf = (delivery: Record<string, unknown> | null) => (typeof delivery?.secret_env === 'string' ? delivery.secret_env : undefined);
  const unsigned = declared
    .filter((agent) => agent.delivery && !variableOf(agent.delivery) && !agent.generated)
    .map((agent) => `agent ${agent.key} has a delivery but no signing secret, so it receives no work: name one with delivery.secret_env, or generate one on its console page`);
  return [
    ...describeUnset(
      [
        ...declared.map((agent) => ({ variable: variableOf(agent.delivery), user: `agent ${agent.key}` })),
        ...connected.map((capability) => ({ variable: ('secret_env' in capability.connector ? capability.connector.secret_env : undefined), user: `capability ${capability.key}` })),
        ...endpoints.map((endpoint) => ({ variable: endpoint.secretEnv ?? undefined, user: `event endpoint ${endpoint.key}` })),
      ],
      env,
    ),
    ...unsigned,
    ...endpoints
      .filter((endpoint) => !endpoint.secretEnv)
      .map((endpoint) => `event endpoint ${endpoint.key} has no signing secret, so its events fail: name one with secret_env, or generate one on /events`),
  ];
}

function describeUnset(named: Array<{ variable: string | undefined; user: string }>, env: NodeJS.ProcessEnv): string[] {
  return named
    .filter((entry): entry is { variable: string; user: string } => !!entry.variable && !env[entry.variable])
    .map((entry) => `${entry.variable} is not set: ${entry.user} cannot sign its webhook calls until it is`);
}

/** Creates the organization row on first use; the file's name, client autonomy and approvals by risk win when given. */
export async function ensureOrganization(tx: Queryable, declared?: OrgFile['organization']): Promise<{ created: boolean }> {
  const [existing] = await tx.select({ id: organization.id }).from(organization).limit(1);
  if (existing) {
    if (declared) {
      await tx
        .update(organization)
        .set({ name: declared.name, clientAutonomy: declared.client_autonomy, approvalsByRisk: declared.approvals, ...decisionSettings(declared), updatedAt: sql`now()` })
        .where(eq(organization.id, existing.id));
    }
    return { created: false };
  }
  await tx.insert(organization).values({
    id: newId('org'),
    name: declared?.name ?? 'My organization',
    clientAutonomy: declared?.client_autonomy ?? 1,
    approvalsByRisk: declared?.approvals ?? {},
    ...(declared ? decisionSettings(declared) : {}),
  });
  return { created: true };
}

/** Where decisions are made (issue 21): set when the file names them; otherwise left as the console set them. */
function decisionSettings(declared: NonNullable<OrgFile['organization']>): { decideInBrowser?: Risk[]; inAppDecisions?: boolean } {
  return {
    ...(declared.decide_in_browser === undefined ? {} : { decideInBrowser: declared.decide_in_browser }),
    ...(declared.in_app_decisions === undefined ? {} : { inAppDecisions: declared.in_app_decisions }),
  };
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
