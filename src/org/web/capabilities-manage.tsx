/**
 * GET/POST /capabilities/new, GET/POST /capabilities/:id/edit and POST /capabilities/:id/status (issue 20 item 1):
 * an owner or admin makes a capability, changes its risk, cost, connector and input JSON Schema, and enables or
 * disables it. The fields and their rules are the organization file's — the input schema is checked exactly as the
 * file's is (`inputSchemaProblem`) — and the key is fixed once made. A capability the file declares is changed in
 * the file (409 here).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import type { Tx } from '../../platform/database.js';
import { ORG_DIRECTORY, writeOrg } from '../changes.js';
import { findCapability, type CapabilityRow } from '../capabilities/catalogue.js';
import { CONTENT_ACTIONS } from '../capabilities/connectors/content-actions.js';
import { inputSchemaProblem } from '../capabilities/input-schema.js';
import { createCapability, setCapabilityEnabled, updateCapability, type CapabilitySaved, type CapabilitySettings } from '../capabilities/manage.js';
import { orgErrors } from '../errors.js';
import { jsonObject, text } from '../fields.js';
import { fileFields } from '../org-file/schema.js';
import { consolePage, type ConsolePage } from './console.js';
import { assertManager } from '../people/manage.js';
import { FormProblems, SecretChoiceFields, afterSave, handleForm, managementPost, orgFileName } from './manage.js';
import { noQuery } from './operations.js';
import { notFound } from './parts.js';
import { formField, type WebContext } from './respond.js';

/** The most of a JSON Schema the form takes: far more than any action's arguments need. */
export const MAX_INPUT_SCHEMA_CHARS = 65_536;

const RISKS = ['low', 'medium', 'high', 'critical'] as const;

const LABELS: Record<string, string> = {
  key: 'Key',
  name: 'Name',
  description: 'Description',
  risk: 'Risk',
  cost: 'Cost',
  connector: 'Connector',
  action: 'Content action',
  webhook_url: 'Webhook URL',
  secret_env: 'Environment variable',
  input_schema: 'Input JSON Schema',
};

const blank = z.string().trim().max(2000).default('');

/** The textarea's JSON Schema: empty for none, else a JSON object the file would accept as `input_schema`. */
const inputSchemaField = z
  .string()
  .max(MAX_INPUT_SCHEMA_CHARS, `is longer than ${MAX_INPUT_SCHEMA_CHARS.toLocaleString('en')} characters`)
  .default('')
  .transform((source, issue): Record<string, unknown> | null => {
    if (!source.trim()) return null;
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch (error) {
      issue.addIssue({ code: 'custom', message: `is not JSON: ${(error as Error).message}` });
      return z.NEVER;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      issue.addIssue({ code: 'custom', message: 'must be a JSON object (a JSON Schema)' });
      return z.NEVER;
    }
    const object = jsonObject().safeParse(value);
    if (!object.success) {
      issue.addIssue({ code: 'custom', message: object.error.issues[0].message });
      return z.NEVER;
    }
    const problem = inputSchemaProblem(object.data);
    if (problem) {
      issue.addIssue({ code: 'custom', message: `is not a usable JSON Schema: ${problem}` });
      return z.NEVER;
    }
    return object.data;
  });

const settingsForm = z
  .object({
    name: text().trim().min(1, 'is required').max(200),
    description: text().trim().max(2000, 'is longer than 2000 characters').default(''),
    risk: z.enum(RISKS, { error: 'must be low, medium, high or critical' }),
    cost: z.string().trim().regex(/^\d{1,9}$/, 'must be a whole number of units (0 or more)').transform(Number),
    connector: z.enum(['content', 'webhook'], { error: 'choose what runs the action' }),
    action: z.string().default(''),
    webhook_url: blank,
    secret: z.enum(['keep', 'generate', 'env'], { error: 'choose how calls are signed' }).default('generate'),
    secret_env: blank.refine((value) => value === '' || fileFields.envName.safeParse(value).success, 'must be an environment variable name such as NOTIFY_SECRET'),
    input_schema: inputSchemaField,
  })
  .superRefine((form, issue) => {
    if (form.connector === 'content' && !CONTENT_ACTIONS.includes(form.action)) {
      issue.addIssue({ code: 'custom', path: ['action'], message: `must be one of the content actions: ${CONTENT_ACTIONS.join(', ')}` });
    }
    if (form.connector === 'webhook' && !fileFields.httpUrl.safeParse(form.webhook_url).success) {
      issue.addIssue({ code: 'custom', path: ['webhook_url'], message: 'must be an http or https URL' });
    }
    if (form.connector === 'webhook' && form.secret === 'env' && !form.secret_env) {
      issue.addIssue({ code: 'custom', path: ['secret_env'], message: 'name the environment variable that holds the signing secret' });
    }
  });

const createForm = settingsForm.and(z.object({ key: fileFields.key }));

function toSettings(form: z.output<typeof settingsForm>): CapabilitySettings {
  return {
    name: form.name,
    description: form.description,
    risk: form.risk,
    cost: form.cost,
    connector:
      form.connector === 'content'
        ? { kind: 'content', action: form.action }
        : { kind: 'webhook', url: form.webhook_url, secret: form.secret === 'env' ? { kind: 'env', name: form.secret_env } : { kind: form.secret } },
    inputSchema: form.input_schema,
  };
}

type Values = Record<string, string>;

function valuesOf(row: CapabilityRow): Values {
  const { connector } = row;
  return {
    name: row.name,
    description: row.description,
    risk: row.risk,
    cost: String(row.cost),
    connector: connector.kind,
    action: connector.kind === 'content' ? connector.action : '',
    webhook_url: connector.kind === 'webhook' ? connector.url : '',
    secret: 'keep',
    secret_env: connector.kind === 'webhook' ? (connector.secret_env ?? '') : '',
    input_schema: row.inputSchema ? JSON.stringify(row.inputSchema, null, 2) : '',
  };
}

function valuesFrom(body: unknown): Values {
  return Object.fromEntries([...Object.keys(LABELS), 'secret'].map((field) => [field, formField(body, field) ?? '']));
}

function currentSigning(row: CapabilityRow | undefined): string | undefined {
  if (row?.connector.kind !== 'webhook') return undefined;
  if (row.connector.secret_env) return `the environment variable ${row.connector.secret_env}`;
  return row.signingSecret ? 'a generated secret' : undefined;
}

export function registerCapabilityManagement(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;
  /** Capabilities are read from memory by every process (read-cache.ts): each change here announces it. */
  const changingCapabilities = <T,>(work: (tx: Tx) => Promise<T>) => writeOrg(web.ctx, [ORG_DIRECTORY], work);
  const file = orgFileName(web.ctx.config);

  async function editable(id: string): Promise<CapabilityRow | undefined> {
    const row = id.length <= 200 ? await findCapability(db, id).catch(() => undefined) : undefined;
    if (row?.managedBy === 'file') throw orgErrors.managedByFile(`the capability ${row.key}`, file);
    return row;
  }

  function formPage(input: { csrf: string; values: Values; problems?: string[]; capability?: CapabilityRow }): ConsolePage {
    const title = input.capability ? `Edit ${input.capability.key}` : 'New capability';
    return { title, body: <CapabilityForm {...input} title={title} /> };
  }

  const afterSaving = (result: CapabilitySaved, key: string, reply: FastifyReply) =>
    afterSave(result, { name: key, href: `/capabilities/${result.id}`, receiver: "the webhook's receiver" }, reply);

  consolePage(app, web, '/capabilities/new', noQuery, async ({ person, csrf }) => {
    assertManager(person, 'capabilities');
    return formPage({ csrf, values: { risk: 'medium', cost: '0', connector: 'webhook', secret: 'generate' } });
  });

  managementPost(app, web, '/capabilities/new', 'capabilities', async ({ person, csrf }, { body, reply }) =>
    handleForm({ schema: createForm, body, labels: LABELS, reply, again: (problems) => formPage({ csrf, values: valuesFrom(body), problems }) }, async (form) =>
      afterSaving(await changingCapabilities((tx) => createCapability(tx, form.key, toSettings(form), person.id)), form.key, reply),
    ),
  );

  consolePage<typeof noQuery, { id: string }>(app, web, '/capabilities/:id/edit', noQuery, async ({ person, csrf }, { params, reply }) => {
    assertManager(person, 'capabilities');
    const capability = await editable(params.id);
    if (!capability) return notFound(reply, 'capability', { href: '/capabilities', name: 'capabilities' });
    return formPage({ csrf, values: valuesOf(capability), capability });
  });

  managementPost<{ id: string }>(app, web, '/capabilities/:id/edit', 'capabilities', async ({ person, csrf }, { body, params, reply }) => {
    const capability = await editable(params.id);
    if (!capability) return notFound(reply, 'capability', { href: '/capabilities', name: 'capabilities' });
    return handleForm({ schema: settingsForm, body, labels: LABELS, reply, again: (problems) => formPage({ csrf, values: valuesFrom(body), problems, capability }) }, async (form) =>
      afterSaving(await changingCapabilities((tx) => updateCapability(tx, capability.id, toSettings(form), person.id, file)), capability.key, reply),
    );
  });

  managementPost<{ id: string }>(app, web, '/capabilities/:id/status', 'capabilities', async ({ person }, { body, params, reply }) => {
    const enabled = z.enum(['enabled', 'disabled']).safeParse(formField(body, 'status'));
    if (!enabled.success) throw orgErrors.invalidRequest('status must be enabled or disabled');
    await changingCapabilities((tx) => setCapabilityEnabled(tx, params.id.slice(0, 200), enabled.data === 'enabled', person.id, file));
    return reply.redirect(`/capabilities/${encodeURIComponent(params.id)}`, 303);
  });
}

function CapabilityForm({ title, csrf, values, problems = [], capability }: { title: string; csrf: string; values: Values; problems?: string[]; capability?: CapabilityRow }): VNode {
  const action = capability ? `/capabilities/${capability.id}/edit` : '/capabilities/new';
  const current = currentSigning(capability);
  const choice = (values.secret || (current ? 'keep' : 'generate')) as 'keep' | 'generate' | 'env';
  return (
    <>
      <p>
        <a href={capability ? `/capabilities/${capability.id}` : '/capabilities'}>{capability ? capability.key : 'Capabilities'}</a>
      </p>
      <h1>{title}</h1>
      <form method="post" action={action}>
        <FormProblems problems={problems} />
        <input type="hidden" name="csrf" value={csrf} />
        {capability ? (
          <p>
            Key: <code>{capability.key}</code> (fixed)
          </p>
        ) : (
          <>
            <label for="capability-key">Key</label>
            <input id="capability-key" name="key" value={values.key ?? ''} required maxLength={64} pattern="[a-z0-9][a-z0-9_\-]{0,63}" aria-describedby="capability-key-help" />
            <small id="capability-key-help">Lower-case letters, digits, "_" or "-": how agents and rules name it. It cannot change later.</small>
          </>
        )}
        <label for="capability-name">Name</label>
        <input id="capability-name" name="name" value={values.name ?? ''} required maxLength={200} />
        <label for="capability-description">Description</label>
        <textarea id="capability-description" name="description" rows={2} maxLength={2000}>
          {values.description ?? ''}
        </textarea>
        <label for="capability-risk">Risk</label>
        <select id="capability-risk" name="risk">
          {RISKS.map((risk) => (
            <option key={risk} value={risk} selected={values.risk === risk}>
              {risk}
            </option>
          ))}
        </select>
        <label for="capability-cost">Cost (units per run, charged to the agent's budget)</label>
        <input id="capability-cost" name="cost" value={values.cost ?? '0'} inputMode="numeric" pattern="[0-9]*" required />
        <fieldset>
          <legend>Connector: what runs the action</legend>
          <p class="check">
            <input type="radio" id="connector-webhook" name="connector" value="webhook" checked={values.connector !== 'content'} />
            <label class="inline" for="connector-webhook">
              A webhook: the action is POSTed, signed, to a URL
            </label>
          </p>
          <label for="capability-url">Webhook URL</label>
          <input id="capability-url" name="webhook_url" type="url" value={values.webhook_url ?? ''} maxLength={2000} />
          <p class="check">
            <input type="radio" id="connector-content" name="connector" value="content" checked={values.connector === 'content'} />
            <label class="inline" for="connector-content">
              The content service: one of its actions
            </label>
          </p>
          <label for="capability-action">Content action</label>
          <select id="capability-action" name="action">
            <option value="">Choose an action</option>
            {CONTENT_ACTIONS.map((name) => (
              <option key={name} value={name} selected={values.action === name}>
                {name}
              </option>
            ))}
          </select>
        </fieldset>
        <SecretChoiceFields choice={choice} envName={values.secret_env ?? ''} current={current} legend="Signing secret of the webhook" placeholder="NOTIFY_SECRET" />
        <label for="capability-schema">Input JSON Schema (optional)</label>
        <textarea id="capability-schema" name="input_schema" rows={8} maxLength={MAX_INPUT_SCHEMA_CHARS} aria-describedby="capability-schema-help">
          {values.input_schema ?? ''}
        </textarea>
        <small id="capability-schema-help">
          What the input must satisfy, as in the file's input_schema. Empty: any object (a content action checks its own arguments).
        </small>
        <div class="actions">
          <button type="submit">{capability ? 'Save changes' : 'Create capability'}</button>
        </div>
      </form>
    </>
  );
}
