/**
 * GET/POST /agents/new, GET/POST /agents/:id/edit and POST /agents/:id/status (issue 20 item 1): an owner or admin
 * makes a declared agent, changes its settings, and enables or disables it (a connected application too). The
 * fields and their rules are the organization file's; the key is fixed once made. An agent the file declares is
 * changed in the file (409 here), and the built-in assistant is not changed at all.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { listActivePeople } from '../people/records.js';
import { createAgent, setAgentStatus, updateAgent, type AgentSaved, type AgentSettings } from '../agents/manage.js';
import { findAgent, type AgentRow } from '../agents/records.js';
import { orgErrors } from '../errors.js';
import { text } from '../fields.js';
import { fileFields } from '../org-file/schema.js';
import { AUTONOMY } from './agents.js';
import { consolePage, type ConsolePage } from './console.js';
import { assertManager } from '../people/manage.js';
import { FormProblems, SecretChoiceFields, afterSave, handleForm, managementPost, orgFileName } from './manage.js';
import { noQuery } from './operations.js';
import { formField, type WebContext } from './respond.js';
import { notFound } from './parts.js';
import type { Tx } from '../../platform/database.js';
import { ORG_DIRECTORY, writeOrg } from '../changes.js';

/** The form's fields as people read them, for its problems. */
const LABELS: Record<string, string> = {
  key: 'Key',
  name: 'Name',
  description: 'Description',
  autonomy: 'Autonomy',
  responsible: 'Responsible person',
  budget: 'Monthly budget',
  delivery_url: 'Delivery URL',
  secret_env: 'Environment variable',
};

const blank = z.string().trim().max(2000).default('');

const settingsForm = z
  .object({
    name: text().trim().min(1, 'is required').max(200),
    description: text().trim().max(2000, 'is longer than 2000 characters').default(''),
    autonomy: z.enum(['0', '1', '2', '3'], { error: 'must be 0, 1, 2 or 3' }).transform(Number),
    responsible: z.string().max(200).default('').transform((value) => value || null),
    budget: z
      .string()
      .trim()
      .regex(/^(\d{1,9})?$/, 'must be a whole number of units, or empty for no budget')
      .default('')
      .transform((value) => (value === '' ? null : Number(value))),
    delivery_url: blank
      .refine((value) => value === '' || fileFields.httpUrl.safeParse(value).success, 'must be an http or https URL, or empty when the agent polls')
      .transform((value) => value || null),
    secret: z.enum(['keep', 'generate', 'env'], { error: 'choose how deliveries are signed' }).default('generate'),
    secret_env: blank.refine((value) => value === '' || fileFields.envName.safeParse(value).success, 'must be an environment variable name such as AGENT_SECRET'),
  })
  .refine((form) => !(form.delivery_url && form.secret === 'env' && !form.secret_env), {
    path: ['secret_env'],
    message: 'name the environment variable that holds the signing secret',
  });

const createForm = settingsForm.and(z.object({ key: fileFields.key.refine((key) => key !== 'assistant', 'belongs to the built-in assistant') }));

function toSettings(form: z.output<typeof settingsForm>): AgentSettings {
  return {
    name: form.name,
    description: form.description,
    autonomy: form.autonomy,
    responsiblePersonId: form.responsible,
    budget: form.budget,
    deliveryUrl: form.delivery_url,
    secret: form.secret === 'env' ? { kind: 'env', name: form.secret_env } : { kind: form.secret },
  };
}

/** The form's values as strings: what the person sent, or the agent's own. */
type Values = Record<string, string>;

function valuesOf(agent: AgentRow): Values {
  const delivery = agent.delivery as { url?: string; secret_env?: string } | null;
  return {
    name: agent.name,
    description: agent.description,
    autonomy: String(agent.autonomy),
    responsible: agent.responsiblePersonId ?? '',
    budget: agent.budget === null ? '' : String(agent.budget),
    delivery_url: delivery?.url ?? '',
    secret: 'keep',
    secret_env: delivery?.secret_env ?? '',
  };
}

function valuesFrom(body: unknown): Values {
  return Object.fromEntries(['key', ...Object.keys(LABELS), 'secret'].map((field) => [field, formField(body, field) ?? '']));
}

/** What signs the agent's deliveries now, in words (never the secret). */
function currentSigning(agent: AgentRow | undefined): string | undefined {
  const delivery = agent?.delivery as { secret_env?: string } | null | undefined;
  if (!delivery) return undefined;
  if (delivery.secret_env) return `the environment variable ${delivery.secret_env}`;
  return agent?.signingSecret ? 'a generated secret' : undefined;
}

export function registerAgentManagement(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;
  /** Agents are read from memory by every process (read-cache.ts): each change here announces it. */
  const changingAgents = <T,>(work: (tx: Tx) => Promise<T>) => writeOrg(web.ctx, [ORG_DIRECTORY], work);
  const file = orgFileName(web.ctx.config);

  /** The agent the edit pages work on: one the console made (a file's is refused, naming the file). */
  async function editable(id: string): Promise<AgentRow | undefined> {
    const agent = id.length <= 200 ? await findAgent(db, id) : undefined;
    if (!agent) return undefined;
    if (agent.managedBy === 'file') throw orgErrors.managedByFile(`the agent ${agent.name}`, file);
    if (agent.kind !== 'declared') throw orgErrors.invalidState(`${agent.name} is ${agent.kind === 'builtin' ? 'built in' : 'a connected application'}: its settings are not edited here`);
    return agent;
  }

  async function formPage(input: { csrf: string; values: Values; problems?: string[]; agent?: AgentRow }): Promise<ConsolePage> {
    const people = await listActivePeople(db);
    const title = input.agent ? `Edit ${input.agent.name}` : 'New agent';
    return { title, body: <AgentForm {...input} title={title} people={people} /> };
  }

  const afterSaving = (result: AgentSaved, name: string, reply: FastifyReply) =>
    afterSave(result, { name, href: `/agents/${result.id}`, receiver: "the agent's receiver" }, reply);

  consolePage(app, web, '/agents/new', noQuery, async ({ person, csrf }) => {
    assertManager(person, 'agents');
    return formPage({ csrf, values: { autonomy: '1', secret: 'generate' } });
  });

  managementPost(app, web, '/agents/new', 'agents', async ({ person, csrf }, { body, reply }) =>
    handleForm({ schema: createForm, body, labels: LABELS, reply, again: (problems) => formPage({ csrf, values: valuesFrom(body), problems }) }, async (form) =>
      afterSaving(await changingAgents((tx) => createAgent(tx, form.key, toSettings(form), person.id)), form.name, reply),
    ),
  );

  consolePage<typeof noQuery, { id: string }>(app, web, '/agents/:id/edit', noQuery, async ({ person, csrf }, { params, reply }) => {
    assertManager(person, 'agents');
    const agent = await editable(params.id);
    if (!agent) return notFound(reply, 'agent', { href: '/agents', name: 'agents' });
    return formPage({ csrf, values: valuesOf(agent), agent });
  });

  managementPost<{ id: string }>(app, web, '/agents/:id/edit', 'agents', async ({ person, csrf }, { body, params, reply }) => {
    const agent = await editable(params.id);
    if (!agent) return notFound(reply, 'agent', { href: '/agents', name: 'agents' });
    return handleForm({ schema: settingsForm, body, labels: LABELS, reply, again: (problems) => formPage({ csrf, values: valuesFrom(body), problems, agent }) }, async (form) =>
      afterSaving(await changingAgents((tx) => updateAgent(tx, agent.id, toSettings(form), person.id, file)), form.name, reply),
    );
  });

  managementPost<{ id: string }>(app, web, '/agents/:id/status', 'agents', async ({ person }, { body, params, reply }) => {
    const status = z.enum(['active', 'disabled']).safeParse(formField(body, 'status'));
    if (!status.success) throw orgErrors.invalidRequest('status must be active or disabled');
    await changingAgents((tx) => setAgentStatus(tx, params.id.slice(0, 200), status.data, person.id, file));
    return reply.redirect(`/agents/${encodeURIComponent(params.id)}`, 303);
  });
}

function AgentForm({
  title,
  csrf,
  values,
  problems = [],
  agent,
  people,
}: {
  title: string;
  csrf: string;
  values: Values;
  problems?: string[];
  agent?: AgentRow;
  people: { id: string; name: string; email: string }[];
}): VNode {
  const action = agent ? `/agents/${agent.id}/edit` : '/agents/new';
  const current = currentSigning(agent);
  const choice = (values.secret || (current ? 'keep' : 'generate')) as 'keep' | 'generate' | 'env';
  return (
    <>
      <p>
        <a href={agent ? `/agents/${agent.id}` : '/agents'}>{agent ? agent.name : 'Agents'}</a>
      </p>
      <h1>{title}</h1>
      <form method="post" action={action}>
        <FormProblems problems={problems} />
        <input type="hidden" name="csrf" value={csrf} />
        {agent ? (
          <p>
            Key: <code>{agent.key}</code> (fixed)
          </p>
        ) : (
          <>
            <label for="agent-key">Key</label>
            <input id="agent-key" name="key" value={values.key ?? ''} required maxLength={64} pattern="[a-z0-9][a-z0-9_\-]{0,63}" aria-describedby="agent-key-help" />
            <small id="agent-key-help">Lower-case letters, digits, "_" or "-": how the file and tools name the agent. It cannot change later.</small>
          </>
        )}
        <label for="agent-name">Name</label>
        <input id="agent-name" name="name" value={values.name ?? ''} required maxLength={200} />
        <label for="agent-description">Description</label>
        <textarea id="agent-description" name="description" rows={2} maxLength={2000}>
          {values.description ?? ''}
        </textarea>
        <label for="agent-autonomy">Autonomy</label>
        <select id="agent-autonomy" name="autonomy">
          {AUTONOMY.map((label, level) => (
            <option key={level} value={String(level)} selected={values.autonomy === String(level)}>
              {level} · {label}
            </option>
          ))}
        </select>
        <label for="agent-responsible">Responsible person</label>
        <select id="agent-responsible" name="responsible" aria-describedby="agent-responsible-help">
          <option value="">Nobody (owners and admins decide)</option>
          {people.map((person) => (
            <option key={person.id} value={person.id} selected={values.responsible === person.id}>
              {person.name} ({person.email})
            </option>
          ))}
        </select>
        <small id="agent-responsible-help">Resolves the agent's decisions.</small>
        <label for="agent-budget">Monthly budget (units)</label>
        <input id="agent-budget" name="budget" value={values.budget ?? ''} inputMode="numeric" pattern="[0-9]*" aria-describedby="agent-budget-help" />
        <small id="agent-budget-help">Cost units per calendar month (UTC). Empty: no budget.</small>
        <label for="agent-delivery">Delivery URL</label>
        <input id="agent-delivery" name="delivery_url" type="url" value={values.delivery_url ?? ''} maxLength={2000} aria-describedby="agent-delivery-help" />
        <small id="agent-delivery-help">Where messages and tasks are POSTed, signed. Empty: the agent polls and receives no deliveries.</small>
        <SecretChoiceFields choice={choice} envName={values.secret_env ?? ''} current={current} legend="Signing secret of the deliveries" placeholder="SCOUT_SECRET" />
        <div class="actions">
          <button type="submit">{agent ? 'Save changes' : 'Create agent'}</button>
        </div>
      </form>
    </>
  );
}
