/**
 * Capabilities made and changed on the console by an owner or admin (DESIGN 4.6, issue 20): the fields the file
 * declares — key (fixed once made), name, description, risk, cost, connector (a content action, or a webhook URL
 * signed with a generated secret or one `secret_env` names) and input JSON Schema (checked as the file's is) — and
 * enable/disable. A capability the file declares is changed only in the file. Each change is written to the
 * activity log in its own transaction, with who made it and which fields changed — never a secret.
 */
import { isDeepStrictEqual } from 'node:util';
import { eq, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/database.js';
import { recordActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import { newId } from '../ids.js';
import { capabilities, type ConnectorJson } from '../schema.js';
import { chooseSigning, describeSigning, type SecretChoice } from '../signing-secrets.js';
import type { CapabilityRow } from './catalogue.js';

export interface CapabilitySettings {
  name: string;
  description: string;
  risk: CapabilityRow['risk'];
  cost: number;
  connector: { kind: 'content'; action: string } | { kind: 'webhook'; url: string; secret: SecretChoice };
  /** Checked by `inputSchemaProblem` already; null: any input object (or the content action's own arguments). */
  inputSchema: Record<string, unknown> | null;
}

export interface CapabilitySaved {
  id: string;
  /** A signing secret generated now, to show once. */
  secret?: string;
}

/** The connector and secret columns, and a secret generated on the way. */
function connectorOf(settings: CapabilitySettings, row: CapabilityRow | undefined) {
  const chosen = settings.connector;
  if (chosen.kind === 'content') return { connector: { kind: 'content', action: chosen.action } as ConnectorJson, signingSecret: null, signing: 'content service' };
  const stored = row?.connector.kind === 'webhook' ? { secretEnv: row.connector.secret_env ?? null, signingSecret: row.signingSecret } : undefined;
  const { secretEnv, signingSecret, shown } = chooseSigning(chosen.secret, stored);
  return {
    connector: { kind: 'webhook', url: chosen.url, ...(secretEnv ? { secret_env: secretEnv } : {}) } as ConnectorJson,
    signingSecret,
    signing: describeSigning({ secretEnv, signingSecret }),
    previous: stored ? describeSigning(stored) : undefined,
    shown,
  };
}

export async function createCapability(tx: Tx, key: string, settings: CapabilitySettings, by: string): Promise<CapabilitySaved> {
  const [taken] = await tx.select({ id: capabilities.id }).from(capabilities).where(eq(capabilities.key, key));
  if (taken) throw orgErrors.invalidArgument('key', `a capability with the key ${key} exists already`);
  const { connector, signingSecret, signing, shown } = connectorOf(settings, undefined);
  const id = newId('cap');
  const fields = { name: settings.name, description: settings.description, risk: settings.risk, cost: settings.cost, inputSchema: settings.inputSchema };
  await tx.insert(capabilities).values({ id, key, ...fields, connector, signingSecret, enabled: true, managedBy: 'console' });
  await recordActivity(tx, {
    kind: 'capability.created',
    summary: `created the capability ${key} (risk ${settings.risk})`,
    personId: by,
    capabilityId: id,
    details: { key, name: settings.name, risk: settings.risk, cost: settings.cost, connector: publicConnector(connector), signing, input_schema: settings.inputSchema !== null },
  });
  return { id, secret: shown };
}

async function changeableCapability(tx: Tx, id: string, file: string): Promise<CapabilityRow> {
  const [row] = await tx.select().from(capabilities).where(eq(capabilities.id, id)).for('update');
  if (!row) throw orgErrors.notFound('capability');
  if (row.managedBy === 'file') throw orgErrors.managedByFile(`the capability ${row.key}`, file);
  return row;
}

export async function updateCapability(tx: Tx, id: string, settings: CapabilitySettings, by: string, file: string): Promise<CapabilitySaved> {
  const row = await changeableCapability(tx, id, file);
  const { connector, signingSecret, signing, previous, shown } = connectorOf(settings, row);
  const changed: Record<string, unknown> = {};
  for (const field of ['name', 'description', 'risk', 'cost'] as const) if (row[field] !== settings[field]) changed[field] = settings[field];
  if (!isDeepStrictEqual(row.inputSchema, settings.inputSchema)) changed.input_schema = settings.inputSchema === null ? 'removed' : 'replaced';
  if (!isDeepStrictEqual(publicConnector(row.connector), publicConnector(connector))) changed.connector = publicConnector(connector);
  if (shown || (previous !== undefined && signing !== previous)) changed.signing = shown ? 'a new generated secret' : signing;
  if (Object.keys(changed).length === 0) return { id };
  await tx
    .update(capabilities)
    .set({ name: settings.name, description: settings.description, risk: settings.risk, cost: settings.cost, inputSchema: settings.inputSchema, connector, signingSecret, updatedAt: sql`now()` })
    .where(eq(capabilities.id, id));
  await recordActivity(tx, {
    kind: 'capability.updated',
    summary: `changed the capability ${row.key}: ${Object.keys(changed).join(', ')}`,
    personId: by,
    capabilityId: id,
    details: { changed },
  });
  return { id, secret: shown };
}

/** Enables or disables it: a disabled capability is always denied (the gate's hard denies). */
export async function setCapabilityEnabled(tx: Tx, id: string, enabled: boolean, by: string, file: string): Promise<void> {
  const row = await changeableCapability(tx, id, file);
  if (row.enabled === enabled) return;
  await tx.update(capabilities).set({ enabled, updatedAt: sql`now()` }).where(eq(capabilities.id, id));
  await recordActivity(tx, {
    kind: 'capability.updated',
    summary: `${enabled ? 'enabled' : 'disabled'} the capability ${row.key}`,
    personId: by,
    capabilityId: id,
    details: { changed: { enabled } },
  });
}

/** The connector as the log shows it: kind, action or URL, and the variable's name — a secret is never in it. */
function publicConnector(connector: ConnectorJson): Record<string, unknown> {
  return connector.kind === 'content' ? { kind: 'content', action: connector.action } : { kind: 'webhook', url: connector.url, secret_env: connector.secret_env ?? null };
}
