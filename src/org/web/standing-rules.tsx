/**
 * The standing rules on /rules (DESIGN 4.4, 4.6, issue 20 item 1): every rule the gate applies, in its order, with
 * what it says and, for a shadow rule, how often it would have fired in the last 30 days. Owners and admins create,
 * edit and delete the console's rules and switch a shadow rule to enforced; the organization file's rules carry the
 * "from org.yaml" badge and are changed in the file.
 *
 * The form is read into the shape the file uses and checked by the file's own rule schema (`standingRuleSchema`),
 * so a rule means the same wherever it was written.
 */
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { orgErrors } from '../errors.js';
import { standingRuleSchema } from '../org-file/schema.js';
import { assertManager } from '../people/manage.js';
import {
  consoleRuleToChange,
  createStandingRule,
  deleteStandingRule,
  enforceStandingRule,
  getStandingRule,
  ruleIdInput,
  updateStandingRule,
  type StandingRuleRecord,
} from '../rules/standing.js';
import { consolePage } from './console.js';
import { managementPost } from './manage-form.js';
import { Badge, ColumnHeads, ConfirmPage, describeConditions, notFound } from './parts.js';
import { FromFile } from './manage.js';
import { formField, formFields, sendPersonalPage, type WebContext } from './respond.js';

/** The window a shadow rule's firings are counted over. */
export const SHADOW_DAYS = 30;

export const RULES_DONE: Record<string, string> = {
  created: 'The rule was created. The gate applies it from the next action on.',
  updated: 'The rule was saved.',
  deleted: 'The rule was deleted.',
  enforced: 'The rule is enforced now.',
};

const RISKS = ['low', 'medium', 'high', 'critical'] as const;
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const VERDICTS = [
  ['deny', 'Deny'],
  ['require_approval', "Require a person's approval"],
  ['allow', 'Allow'],
] as const;

export function registerStandingRulePages(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;

  consolePage(app, web, '/rules/standing/new', z.object({}), async (viewer) => {
    assertManager(viewer.person);
    return { title: 'New rule', body: <RuleForm csrf={viewer.csrf} /> };
  });

  consolePage<z.ZodObject, { rule_id: string }>(app, web, '/rules/standing/:rule_id/edit', z.object({}), async (viewer, { params, reply }) => {
    assertManager(viewer.person);
    const rule = await getStandingRule(db, params.rule_id);
    if (!rule) return notFound(reply, 'standing rule', { href: '/rules', name: 'rules' });
    if (rule.managed_by === 'file') throw orgErrors.managedByFile(`The rule ${rule.name}`);
    return { title: `Edit ${rule.name}`, body: <RuleForm csrf={viewer.csrf} rule={rule} /> };
  });

  managementPost(app, web, '/rules/standing', {
    back: '/rules/standing/new',
    input: standingRuleSchema,
    read: readRule,
    run: async (person, rule) => (await createStandingRule(db, person, rule), '/rules?done=created'),
  });

  managementPost(app, web, '/rules/standing/:rule_id', {
    back: '/rules',
    input: standingRuleSchema,
    read: readRule,
    run: async (person, rule, { params }) => (await updateStandingRule(db, person, params.rule_id, rule), '/rules?done=updated'),
  });

  // The gate stops applying a deleted rule at once: the first POST asks, the confirmed one deletes.
  managementPost(app, web, '/rules/standing/:rule_id/delete', {
    back: '/rules',
    input: ruleIdInput.extend({ confirm: z.literal('yes').optional() }),
    read: (body, params) => ({ ...params, confirm: formField(body, 'confirm') }),
    async run(person, input, { reply, session, csrf }) {
      if (input.confirm) return (await deleteStandingRule(db, person, input.rule_id), '/rules?done=deleted');
      const rule = await consoleRuleToChange(db, person, input.rule_id);
      return sendPersonalPage(web, reply, session, csrf, `Delete the rule ${rule.name}?`, <ConfirmDeletion rule={rule} csrf={csrf} />, '/rules');
    },
  });

  managementPost(app, web, '/rules/standing/:rule_id/enforce', {
    back: '/rules',
    input: ruleIdInput,
    read: (_body, params) => params,
    run: async (person, input) => (await enforceStandingRule(db, person, input.rule_id), '/rules?done=enforced'),
  });
}

function ConfirmDeletion({ rule, csrf }: { rule: StandingRuleRecord; csrf: string }): VNode {
  return (
    <ConfirmPage
      title={`Delete the rule ${rule.name}?`}
      action={`/rules/standing/${rule.id}/delete`}
      csrf={csrf}
      confirm={`Delete ${rule.name}`}
      keep={{ href: '/rules', label: `Keep ${rule.name}` }}
    >
      {rule.mode === 'shadow' ? 'It stops recording what it would have decided.' : 'The gate stops applying it from the next action on, and the other rules decide what it decided.'}{' '}
      The activity log keeps that you deleted it and what it said.
    </ConfirmPage>
  );
}

/** The form as the organization file writes a rule; empty fields are conditions not given. */
function readRule(body: unknown): unknown {
  const given = (name: string) => formField(body, name)?.trim() || undefined;
  const keys = (name: string) => {
    const list = (formField(body, name) ?? '').split(/[\s,]+/).filter(Boolean);
    return list.length ? list : undefined;
  };
  const ticked = (name: string) => {
    const list = formFields(body, name);
    return list.length ? list : undefined;
  };
  const input = given('input');
  const approvals = given('approvals');
  return {
    name: formField(body, 'name'),
    when: {
      risk: ticked('risk'),
      capability: keys('capability'),
      agent: keys('agent'),
      weekdays: ticked('weekdays'),
      hours: given('hours'),
      timezone: given('timezone'),
      input: input === undefined ? undefined : parseJson('when.input', input),
    },
    then: formField(body, 'then'),
    mode: formField(body, 'mode'),
    approvals: approvals === undefined ? undefined : Number(approvals),
  };
}

function parseJson(field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw orgErrors.invalidArgument(field, `is not JSON (${(error as Error).message})`);
  }
}

const asList = (value: string | readonly string[] | undefined): readonly string[] => (value === undefined ? [] : typeof value === 'string' ? [value] : value);

/** Create (no `rule`) or edit a console rule. */
function RuleForm({ csrf, rule }: { csrf: string; rule?: StandingRuleRecord }): VNode {
  const when = rule?.when ?? {};
  return (
    <>
      <p>
        <a href="/rules">Rules</a>
      </p>
      <h1>{rule ? `Edit ${rule.name}` : 'New rule'}</h1>
      <p>Every condition you give must hold for the rule to match; leave a condition empty to match anything.</p>
      <form method="post" action={rule ? `/rules/standing/${encodeURIComponent(rule.id)}` : '/rules/standing'}>
        <input type="hidden" name="csrf" value={csrf} />
        <label for="rule-name">Name (shown in verdicts)</label>
        <input id="rule-name" name="name" type="text" required maxlength={200} value={rule?.name ?? ''} />
        <fieldset>
          <legend>Risk of the capability</legend>
          {RISKS.map((risk) => (
            <Check key={risk} name="risk" value={risk} checked={asList(when.risk).includes(risk)} />
          ))}
        </fieldset>
        <label for="rule-capability">Capability keys (separated by commas)</label>
        <input id="rule-capability" name="capability" type="text" value={asList(when.capability).join(', ')} />
        <label for="rule-agent">Agent keys (separated by commas)</label>
        <input id="rule-agent" name="agent" type="text" value={asList(when.agent).join(', ')} />
        <fieldset>
          <legend>Weekdays</legend>
          {WEEKDAYS.map((day) => (
            <Check key={day} name="weekdays" value={day} checked={asList(when.weekdays).includes(day)} />
          ))}
        </fieldset>
        <label for="rule-hours">Hours, such as 09:00-17:00</label>
        <input id="rule-hours" name="hours" type="text" value={when.hours ?? ''} />
        <label for="rule-timezone">Time zone of weekdays and hours, such as Europe/Berlin</label>
        <input id="rule-timezone" name="timezone" type="text" value={when.timezone ?? ''} />
        <label for="rule-input">Input conditions (JSON), such as [{'{"path": "/amount", "op": "gt", "value": 100}'}]</label>
        <textarea id="rule-input" name="input" rows={3}>
          {when.input === undefined ? '' : JSON.stringify(when.input, null, 2)}
        </textarea>
        <label for="rule-then">Then</label>
        <select id="rule-then" name="then">
          {VERDICTS.map(([value, label]) => (
            <option key={value} value={value} selected={rule?.then === value}>
              {label}
            </option>
          ))}
        </select>
        <label for="rule-approvals">Approvals needed, 2 to 10 different people (only with approval; empty means one)</label>
        <input id="rule-approvals" name="approvals" type="number" min={2} max={10} value={rule?.approvals ?? ''} />
        <fieldset>
          <legend>Mode</legend>
          <p class="check">
            <input type="radio" id="mode-enforce" name="mode" value="enforce" checked={rule?.mode !== 'shadow'} />
            <label class="inline" for="mode-enforce">
              Enforce: the gate applies it
            </label>
          </p>
          <p class="check">
            <input type="radio" id="mode-shadow" name="mode" value="shadow" checked={rule?.mode === 'shadow'} />
            <label class="inline" for="mode-shadow">
              Shadow: only record what it would have done
            </label>
          </p>
        </fieldset>
        <button type="submit">{rule ? 'Save rule' : 'Create rule'}</button>
      </form>
    </>
  );
}

function Check({ name, value, checked }: { name: string; value: string; checked: boolean }): VNode {
  const id = `${name}-${value}`;
  return (
    <p class="check">
      <input type="checkbox" id={id} name={name} value={value} checked={checked} />
      <label class="inline" for={id}>
        {value}
      </label>
    </p>
  );
}

/** The rule's conditions in words, its capability first. */
function describeRule(when: StandingRuleRecord['when']): string {
  const rest = describeConditions(when);
  if (when.capability === undefined) return rest;
  const capability = `capability ${asList(when.capability).join(', ')}`;
  return rest === 'always' ? capability : `${capability} · ${rest}`;
}

function times(count: number): string {
  return `${count} ${count === 1 ? 'time' : 'times'}`;
}

/** Every standing rule in the gate's order; controls for an owner or admin on the console's own. */
export function StandingRules({ rules, fired, manager, csrf }: { rules: StandingRuleRecord[]; fired: Map<string, number>; manager: boolean; csrf: string }): VNode {
  return (
    <>
      <h2>Standing rules</h2>
      <p>The gate weighs every matching rule: deny beats requiring approval, which beats allow. A shadow rule only records what it would have done.</p>
      {manager ? (
        <p>
          <a href="/rules/standing/new">New rule</a>
        </p>
      ) : null}
      {rules.length === 0 ? (
        <p>No standing rules.</p>
      ) : (
        <table class="stack">
          <ColumnHeads names={['Rule', 'When', 'Then', 'Mode']} action={manager ? 'Actions' : undefined} />
          <tbody>
            {rules.map((rule) => (
              <tr key={rule.id}>
                <th scope="row">
                  {rule.name}
                  <FromFile managedBy={rule.managed_by} />
                </th>
                <td data-label="When">{describeRule(rule.when)}</td>
                <td data-label="Then">
                  <Badge value={rule.then} />
                  {rule.approvals ? ` by ${rule.approvals} different people` : null}
                </td>
                <td data-label="Mode">
                  {rule.mode === 'shadow' ? `shadow: would have fired ${times(fired.get(rule.id) ?? 0)} in the last ${SHADOW_DAYS} days` : 'enforced'}
                </td>
                {manager ? (
                  <td>
                    {rule.managed_by === 'console' ? <RuleActions rule={rule} csrf={csrf} /> : <span class="muted">Change it in org.yaml</span>}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function RuleActions({ rule, csrf }: { rule: StandingRuleRecord; csrf: string }): VNode {
  const action = (verb: string) => `/rules/standing/${encodeURIComponent(rule.id)}/${verb}`;
  return (
    <div class="actions">
      <a href={action('edit')} aria-label={`Edit ${rule.name}`}>
        Edit
      </a>
      {rule.mode === 'shadow' ? (
        <form method="post" action={action('enforce')}>
          <input type="hidden" name="csrf" value={csrf} />
          <button type="submit" aria-label={`Enforce ${rule.name}`}>
            Enforce
          </button>
        </form>
      ) : null}
      <form method="post" action={action('delete')}>
        <input type="hidden" name="csrf" value={csrf} />
        <button type="submit" class="secondary" aria-label={`Delete ${rule.name}`}>
          Delete
        </button>
      </form>
    </div>
  );
}
