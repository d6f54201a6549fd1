/**
 * Agents made and changed on the console by an owner or admin (DESIGN 4.6, issue 20): the same fields the file
 * declares (key, name, description, autonomy, responsible person, monthly budget, delivery URL and its signing
 * secret), and enable/disable. What the file declares is changed only in the file (`managed_by = 'file'`); the
 * built-in assistant is not changed at all, and a connected application can only be enabled or disabled (its
 * settings come from its person's consent). Each change is written to the activity log in its own transaction,
 * with who made it and which fields changed — never a secret.
 */
import { eq, sql } from 'drizzle-orm';
import type { Tx } from '../../platform/database.js';
import { recordActivity } from '../activity/records.js';
import { orgErrors } from '../errors.js';
import { newId } from '../ids.js';
import { agents, people } from '../schema.js';
import { chooseSigning, describeSigning, type SecretChoice, type Signing } from '../signing-secrets.js';
import type { AgentRow } from './records.js';

export interface AgentSettings {
  name: string;
  description: string;
  autonomy: number;
  responsiblePersonId: string | null;
  budget: number | null;
  /** Where work is POSTed; null: the agent polls (and holds no secret). */
  deliveryUrl: string | null;
  secret: SecretChoice;
}

/** What was saved; `secret` is a signing secret generated now, to show once. */
export interface AgentSaved {
  id: string;
  secret?: string;
}

/** The delivery and secret columns the settings come to, and the secret generated on the way. */
function deliveryOf(settings: AgentSettings, current: Signing | undefined) {
  if (!settings.deliveryUrl) return { delivery: null, signingSecret: null, signing: 'no delivery' };
  const { secretEnv, signingSecret, shown } = chooseSigning(settings.secret, current);
  return {
    delivery: { kind: 'webhook', url: settings.deliveryUrl, ...(secretEnv ? { secret_env: secretEnv } : {}) },
    signingSecret,
    signing: describeSigning({ secretEnv, signingSecret }),
    shown,
  };
}

async function checkResponsible(tx: Tx, personId: string | null): Promise<void> {
  if (personId === null) return;
  const [person] = await tx.select({ status: people.status }).from(people).where(eq(people.id, personId));
  if (!person || person.status !== 'active') throw orgErrors.invalidArgument('responsible', 'is not a person of the organization');
}

export async function createAgent(tx: Tx, key: string, settings: AgentSettings, by: string): Promise<AgentSaved> {
  const [taken] = await tx.select({ id: agents.id }).from(agents).where(eq(agents.key, key));
  if (taken) throw orgErrors.invalidArgument('key', `an agent with the key ${key} exists already`);
  await checkResponsible(tx, settings.responsiblePersonId);
  const { delivery, signingSecret, signing, shown } = deliveryOf(settings, undefined);
  const id = newId('agt');
  const fields = { name: settings.name, description: settings.description, autonomy: settings.autonomy, responsiblePersonId: settings.responsiblePersonId, budget: settings.budget };
  await tx.insert(agents).values({ id, key, kind: 'declared', ...fields, delivery, signingSecret, managedBy: 'console' });
  await recordActivity(tx, {
    kind: 'agent.created',
    summary: `created the agent ${settings.name} (${key})`,
    personId: by,
    agentId: id,
    details: { key, ...loggedFields(fields), delivery_url: settings.deliveryUrl, signing },
  });
  return { id, secret: shown };
}

/** The agent the console may change, or the refusal saying why not (a file's, the assistant's, a client's settings). */
async function changeableAgent(tx: Tx, id: string, file: string, change: 'settings' | 'status'): Promise<AgentRow> {
  const [agent] = await tx.select().from(agents).where(eq(agents.id, id)).for('update');
  if (!agent) throw orgErrors.notFound('agent');
  if (agent.managedBy === 'file') throw orgErrors.managedByFile(`the agent ${agent.name}`, file);
  if (agent.kind === 'builtin') throw orgErrors.invalidState(`the ${agent.name} is built in: it is always there and is not changed on the console`);
  if (agent.kind === 'client' && change === 'settings') {
    throw orgErrors.invalidState(`${agent.name} is a connected application: its settings come from its person's consent; it can only be enabled or disabled`);
  }
  return agent;
}

export async function updateAgent(tx: Tx, id: string, settings: AgentSettings, by: string, file: string): Promise<AgentSaved> {
  const agent = await changeableAgent(tx, id, file, 'settings');
  await checkResponsible(tx, settings.responsiblePersonId);
  const stored = agent.delivery as { url?: string; secret_env?: string } | null;
  const current = stored ? { secretEnv: stored.secret_env ?? null, signingSecret: agent.signingSecret } : undefined;
  const { delivery, signingSecret, signing, shown } = deliveryOf(settings, current);
  const next = { name: settings.name, description: settings.description, autonomy: settings.autonomy, responsiblePersonId: settings.responsiblePersonId, budget: settings.budget };
  const before = { name: agent.name, description: agent.description, autonomy: agent.autonomy, responsiblePersonId: agent.responsiblePersonId, budget: agent.budget };
  const changed: Record<string, unknown> = loggedFields(
    Object.fromEntries(Object.entries(next).filter(([field, value]) => before[field as keyof typeof before] !== value)) as Partial<typeof next>,
  );
  if ((stored?.url ?? null) !== settings.deliveryUrl) changed.delivery_url = settings.deliveryUrl;
  const previousSigning = current ? describeSigning(current) : 'no delivery';
  if (shown || signing !== previousSigning) changed.signing = shown ? 'a new generated secret' : signing;
  if (Object.keys(changed).length === 0) return { id };
  await tx.update(agents).set({ ...next, delivery, signingSecret, updatedAt: sql`now()` }).where(eq(agents.id, id));
  await recordActivity(tx, {
    kind: 'agent.updated',
    summary: `changed the agent ${settings.name}: ${Object.keys(changed).join(', ')}`,
    personId: by,
    agentId: id,
    details: { changed },
  });
  return { id, secret: shown };
}

/** Enables or disables the agent (a disabled agent receives no work and its actions are denied). */
export async function setAgentStatus(tx: Tx, id: string, status: 'active' | 'disabled', by: string, file: string): Promise<void> {
  const agent = await changeableAgent(tx, id, file, 'status');
  if (agent.status === status) return;
  await tx.update(agents).set({ status, updatedAt: sql`now()` }).where(eq(agents.id, id));
  await recordActivity(tx, {
    kind: 'agent.updated',
    summary: `${status === 'active' ? 'enabled' : 'disabled'} the agent ${agent.name}`,
    personId: by,
    agentId: id,
    details: { changed: { status } },
  });
}

/** The fields as the activity log names them (the file's words). */
function loggedFields(fields: Partial<Omit<AgentSettings, 'deliveryUrl' | 'secret'>>): Record<string, unknown> {
  const { responsiblePersonId, ...rest } = fields;
  return { ...rest, ...(responsiblePersonId !== undefined ? { responsible_person_id: responsiblePersonId } : {}) };
}
