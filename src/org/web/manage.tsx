/**
 * What the console's management forms share (DESIGN 4.6, issue 20): only owners and admins see and post them (a
 * member is answered 403), every post carries the CSRF token, a form refused for its input is shown again with the
 * problem and the person's values (400, nothing written), records the organization file declares carry a
 * "from org.yaml" badge and are not edited here, and a signing secret the server generated is shown once.
 */
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import type { z } from 'zod';
import { isAppError } from '../../platform/errors.js';
import type { OrgConfig } from '../../config.js';
import { assertManager } from '../people/manage.js';
import type { SecretChoice } from '../signing-secrets.js';
import { consolePost, type ConsolePage, type ConsolePostInput, type Viewer } from './console.js';
import type { WebContext } from './respond.js';

/** The organization file's name as the console shows it: ATRIUM_ORG_FILE's, or org.yaml. */
export function orgFileName(config: OrgConfig): string {
  return config.orgFile ? path.basename(config.orgFile) : 'org.yaml';
}

/**
 * The mark after the name of a record the organization file manages (nothing for the console's): a small badge, and
 * no edit buttons beside it. `file` is the file's name where the page knows it (`orgFileName`).
 */
export function FromFile({ managedBy, file = 'org.yaml' }: { managedBy: 'file' | 'console'; file?: string }): VNode | null {
  if (managedBy !== 'file') return null;
  return (
    <>
      {' '}
      <span class="badge from-file" title={`Declared in ${file}: change it there and apply the file`}>{`from ${file}`}</span>
    </>
  );
}

/** The form's problems, said at the top of the form, with what to do. */
export function FormProblems({ problems }: { problems: readonly string[] }): VNode | null {
  if (!problems.length) return null;
  return (
    <div role="alert" class="problems">
      <p>Nothing was saved:</p>
      <ul>
        {problems.map((problem) => (
          <li key={problem}>{problem}</li>
        ))}
      </ul>
    </div>
  );
}

/** A signing secret the server just generated: shown this once, with what to do with it. */
function SecretShownOnce({ secret, receiver }: { secret: string; receiver: string }): VNode {
  return (
    <section class="card" aria-labelledby="secret-heading">
      <h2 id="secret-heading">Signing secret</h2>
      <p>
        <strong>Copy it now: it will not be shown again.</strong> Give it to {receiver}, which checks with it that each request comes from this
        organization (Standard Webhooks).
      </p>
      <pre>
        <code>{secret}</code>
      </pre>
      <p class="muted">Lost it? Generate a new one on the edit page; the old one stops working at once.</p>
    </section>
  );
}

/**
 * How a webhook is signed, as the form asks it: keep what signs now (offered when something does), generate a new
 * secret, or name an environment variable (`secret_env`, as in the file). `current` says what signs now.
 */
export function SecretChoiceFields({
  choice,
  envName,
  current,
  legend,
  placeholder,
}: {
  choice: SecretChoice['kind'];
  envName: string;
  current?: string;
  legend: string;
  placeholder: string;
}): VNode {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {current ? (
        <p class="check">
          <input type="radio" id="secret-keep" name="secret" value="keep" checked={choice === 'keep'} />
          <label class="inline" for="secret-keep">
            Keep the current one ({current})
          </label>
        </p>
      ) : null}
      <p class="check">
        <input type="radio" id="secret-generate" name="secret" value="generate" checked={choice === 'generate'} />
        <label class="inline" for="secret-generate">
          {current ? 'Generate a new secret (shown once; the current one stops working)' : 'Generate a secret (shown once, after saving)'}
        </label>
      </p>
      <p class="check">
        <input type="radio" id="secret-env" name="secret" value="env" checked={choice === 'env'} />
        <label class="inline" for="secret-env">
          Use the secret in an environment variable of the server
        </label>
      </p>
      <label for="secret-env-name">Environment variable (with the last choice)</label>
      <input id="secret-env-name" name="secret_env" value={envName} maxLength={100} placeholder={placeholder} autocomplete="off" />
    </fieldset>
  );
}

/** What a refused form says: each zod issue as "Label: problem", the field named as the form labels it. */
function describeIssues(error: z.ZodError, labels: Record<string, string>): string[] {
  return error.issues.map((issue) => {
    const field = issue.path.join('.');
    return `${labels[field] ?? (field || 'The form')}: ${issue.message}`;
  });
}

/** A domain refusal of the input (400), as the form's problem; anything else is not the form's to show. */
function inputProblem(error: unknown, labels: Record<string, string>): string | undefined {
  if (!isAppError(error) || error.status !== 400) return undefined;
  const [issue] = (error.details?.issues ?? []) as { field: string; message: string }[];
  return issue ? `${labels[issue.field] ?? issue.field}: ${issue.message}` : error.message;
}

/**
 * `POST path` of a management form: `consolePost` for a signed-in owner or admin (a member is answered 403).
 */
export function managementPost<Params extends Record<string, string>>(
  app: FastifyInstance,
  web: WebContext,
  route: string,
  what: string,
  handle: (viewer: Viewer, input: ConsolePostInput<Params>) => Promise<ConsolePage | FastifyReply>,
): void {
  consolePost(app, web, route, (person) => assertManager(person, what), handle);
}

/**
 * A posted form: `schema` checks the body, then `save` writes. Input refused by either (the schema, or the domain's
 * 400 such as a key taken) shows the form again (`again`) with the problems, answered 400, nothing written.
 */
export async function handleForm<Schema extends z.ZodType>(
  form: { schema: Schema; body: unknown; labels: Record<string, string>; reply: FastifyReply; again: (problems: string[]) => ConsolePage | Promise<ConsolePage> },
  save: (data: z.output<Schema>) => Promise<ConsolePage | FastifyReply>,
): Promise<ConsolePage | FastifyReply> {
  const refuse = (problems: string[]) => {
    form.reply.code(400);
    return form.again(problems);
  };
  const parsed = form.schema.safeParse(form.body);
  if (!parsed.success) return refuse(describeIssues(parsed.error, form.labels));
  try {
    return await save(parsed.data);
  } catch (error) {
    const problem = inputProblem(error, form.labels);
    if (problem) return refuse([problem]);
    throw error;
  }
}

/** After saving: the signing secret generated now, shown once on its own page; otherwise straight to the record. */
export function afterSave(saved: { secret?: string }, record: { name: string; href: string; receiver: string }, reply: FastifyReply): ConsolePage | FastifyReply {
  if (!saved.secret) return reply.redirect(record.href, 303);
  return {
    title: `Saved ${record.name}`,
    body: (
      <>
        <h1>Saved {record.name}</h1>
        <SecretShownOnce secret={saved.secret} receiver={record.receiver} />
        <p>
          <a href={record.href}>Go to {record.name}</a>
        </p>
      </>
    ),
  };
}

/** Enable or Disable, as a one-button form posting `status` to `action`. */
export function StatusToggle({ action, csrf, status, enable }: { action: string; csrf: string; status: string; enable: boolean }): VNode {
  return (
    <form method="post" action={action}>
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="status" value={status} />
      <button type="submit" class="secondary">
        {enable ? 'Enable' : 'Disable'}
      </button>
    </form>
  );
}
