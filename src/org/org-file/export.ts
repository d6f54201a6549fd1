/**
 * `atrium org export` (DESIGN 4.2, 4.6): the organization as it is now — what the file declared and what the
 * console made — written as an organization file that `org apply` takes back with no change. One small writer per
 * section of the file, in the file's order; a new section of the file is a new writer in `SECTIONS`.
 *
 * Secrets are never written: no password (`password_env` is left out: applying keeps each person's password),
 * and no signing secret the server generated (a YAML comment on that agent or capability says so; applying keeps
 * it). A `secret_env` is a name, not a secret, and is written.
 */
import { asc, eq, sql } from 'drizzle-orm';
import { Document, isMap, isSeq } from 'yaml';
import type { z } from 'zod';
import type { Db, Queryable } from '../../platform/database.js';
import { agents, capabilities, eventEndpoints, organization, people, spaceMembers, spaces, standingRules } from '../schema.js';
import type { OrgEventType } from '../events/announce.js';
import { parseOrgFile, type orgFileSchema } from './schema.js';

type FileInput = z.input<typeof orgFileSchema>;

/** One top-level field of the file, and comments for items of its list (by index). */
export interface ExportedSection {
  field: keyof FileInput;
  value: FileInput[keyof FileInput];
  notes?: Map<number, string>;
}

type SectionWriter = (db: Queryable) => Promise<ExportedSection>;

const HEADER = [
  ' The organization, written by `npx atrium org export`; `npx atrium org apply FILE` takes it back unchanged.',
  ' Applying it makes every record below managed by the file: the console then shows it "from org.yaml" and no longer edits it.',
  ' Never written: passwords (add password_env to set one) and signing secrets the server generated (applying keeps them).',
].join('\n');

async function organizationSection(db: Queryable): Promise<ExportedSection> {
  const [row] = await db
    .select({
      name: organization.name,
      clientAutonomy: organization.clientAutonomy,
      approvals: organization.approvalsByRisk,
      decideInBrowser: organization.decideInBrowser,
      inAppDecisions: organization.inAppDecisions,
    })
    .from(organization)
    .limit(1);
  if (!row) return { field: 'organization', value: undefined };
  const approvals = Object.keys(row.approvals).length ? { approvals: row.approvals } : {};
  // Written only when set: a file without them leaves the console's choice alone, so the defaults need no line.
  const browser = row.decideInBrowser.length ? { decide_in_browser: row.decideInBrowser } : {};
  const inApp = row.inAppDecisions ? { in_app_decisions: true } : {};
  return { field: 'organization', value: { name: row.name, client_autonomy: row.clientAutonomy, ...approvals, ...browser, ...inApp } };
}

/** People who may sign in; someone removed is not declared again. */
async function peopleSection(db: Queryable): Promise<ExportedSection> {
  const rows = await db
    .select({ email: people.email, name: people.name, role: people.role })
    .from(people)
    .where(eq(people.status, 'active'))
    .orderBy(asc(people.email));
  return { field: 'people', value: rows };
}

async function spacesSection(db: Queryable): Promise<ExportedSection> {
  const rows = await db.select({ id: spaces.id, key: spaces.key, name: spaces.name }).from(spaces).orderBy(asc(spaces.key));
  const members = await db
    .select({ spaceId: spaceMembers.spaceId, email: people.email })
    .from(spaceMembers)
    .innerJoin(people, eq(people.id, spaceMembers.personId))
    .orderBy(asc(people.email));
  const of = (spaceId: string) => members.filter((member) => member.spaceId === spaceId).map((member) => member.email);
  return { field: 'spaces', value: rows.map((space) => ({ key: space.key, name: space.name, members: of(space.id) })) };
}

/** Declared agents only: the built-in assistant exists everywhere, and connected clients come from consent. */
async function agentsSection(db: Queryable): Promise<ExportedSection> {
  const rows = await db
    .select({ agent: agents, responsible: people.email })
    .from(agents)
    .leftJoin(people, eq(people.id, agents.responsiblePersonId))
    .where(eq(agents.kind, 'declared'))
    .orderBy(asc(agents.key));
  const notes = new Map<number, string>();
  const value = rows.map(({ agent, responsible }, index) => {
    const delivery = agent.delivery as { url?: unknown; secret_env?: unknown } | null;
    const said = [
      ...(delivery && !delivery.secret_env && agent.signingSecret ? [generatedSecretNote('deliveries')] : []),
      ...(agent.status === 'disabled' ? [' Disabled on the console: the file does not set an agent\'s status, so applying it leaves it disabled.'] : []),
    ];
    if (said.length) notes.set(index, said.join('\n'));
    return {
      key: agent.key!,
      name: agent.name,
      ...(agent.description ? { description: agent.description } : {}),
      autonomy: agent.autonomy,
      ...(responsible ? { responsible } : {}),
      ...(agent.budget !== null ? { budget: agent.budget } : {}),
      ...(delivery
        ? { delivery: { kind: 'webhook' as const, url: String(delivery.url), ...(typeof delivery.secret_env === 'string' ? { secret_env: delivery.secret_env } : {}) } }
        : {}),
    };
  });
  return { field: 'agents', value, notes };
}

async function capabilitiesSection(db: Queryable): Promise<ExportedSection> {
  const rows = await db.select().from(capabilities).orderBy(asc(capabilities.key));
  const notes = new Map<number, string>();
  const value = rows.map((capability, index) => {
    const { connector } = capability;
    if (connector.kind === 'webhook' && !connector.secret_env && capability.signingSecret) notes.set(index, generatedSecretNote('calls'));
    return {
      key: capability.key,
      name: capability.name,
      ...(capability.description ? { description: capability.description } : {}),
      risk: capability.risk,
      cost: capability.cost,
      connector:
        connector.kind === 'content'
          ? { kind: 'content' as const, action: connector.action }
          : { kind: 'webhook' as const, url: connector.url, ...(connector.secret_env ? { secret_env: connector.secret_env } : {}) },
      ...(capability.inputSchema ? { input_schema: capability.inputSchema } : {}),
      enabled: capability.enabled,
    };
  });
  return { field: 'capabilities', value, notes };
}

/** Every standing rule, the file's and the console's, in the order the gate lists them (learned rules are not the file's). */
async function rulesSection(db: Queryable): Promise<ExportedSection> {
  const rows = await db.select().from(standingRules).orderBy(asc(standingRules.position), asc(standingRules.createdAt), asc(standingRules.id));
  return {
    field: 'rules',
    value: rows.map((rule) => ({
      name: rule.name,
      when: rule.when as Record<string, never>,
      then: rule.then,
      mode: rule.mode,
      ...(rule.approvals ? { approvals: rule.approvals } : {}),
    })),
  };
}

async function eventEndpointsSection(db: Queryable): Promise<ExportedSection> {
  const rows = await db.select().from(eventEndpoints).orderBy(asc(eventEndpoints.key));
  const notes = new Map<number, string>();
  const value = rows.map((endpoint, index) => {
    if (!endpoint.secretEnv && endpoint.signingSecret) notes.set(index, generatedSecretNote('events'));
    return {
      key: endpoint.key,
      url: endpoint.url,
      ...(endpoint.events.length ? { events: endpoint.events as OrgEventType[] } : {}),
      ...(endpoint.secretEnv ? { secret_env: endpoint.secretEnv } : {}),
      enabled: endpoint.enabled,
    };
  });
  return { field: 'event_endpoints', value, notes };
}

async function decisionTtlSection(db: Queryable): Promise<ExportedSection> {
  const [row] = await db.select({ seconds: organization.decisionTtlSeconds }).from(organization).limit(1);
  return { field: 'decision_ttl', value: asDuration(row?.seconds ?? 604_800) };
}

const SECTIONS: SectionWriter[] = [
  organizationSection,
  peopleSection,
  spacesSection,
  agentsSection,
  capabilitiesSection,
  rulesSection,
  eventEndpointsSection,
  decisionTtlSection,
];

function generatedSecretNote(what: string): string {
  return ` Its ${what} are signed with a secret the server generated, which is never written here; applying this file keeps it. To sign with your own, name it with secret_env.`;
}

/** Seconds as the file's duration: the largest unit that divides them exactly (7d, 12h, 15m, 90s). */
export function asDuration(seconds: number): string {
  for (const [unit, size] of [['d', 86_400], ['h', 3600], ['m', 60]] as const) if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}

/**
 * The organization file of the organization in `db`, as YAML. It is read back through the file's own schema
 * before it is returned, so an export `org apply` would refuse is an error here, not a surprise later.
 */
export async function exportOrgFile(db: Db): Promise<string> {
  const sections = await db.transaction(async (tx) => {
    // One snapshot: a change committed while the sections are read does not tear the file.
    await tx.execute(sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`);
    const written: ExportedSection[] = [];
    for (const writer of SECTIONS) written.push(await writer(tx));
    return written;
  });
  const document = new Document(Object.fromEntries(sections.filter((section) => section.value !== undefined).map((section) => [section.field, section.value])));
  document.commentBefore = HEADER;
  for (const section of sections) {
    const list = document.get(section.field, true);
    if (!section.notes || !isSeq(list)) continue;
    for (const [index, note] of section.notes) {
      const item = list.items[index];
      if (isMap(item)) item.commentBefore = note;
    }
  }
  const text = document.toString({ lineWidth: 0 });
  parseOrgFile(text, 'the exported organization file');
  return text;
}
