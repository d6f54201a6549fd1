/**
 * The organization file (DESIGN section 4.2): YAML declaring the organization, people, spaces, agents,
 * capabilities and standing rules. This module parses and validates it; `apply.ts` writes it.
 *
 * Secrets never appear in the file: it names environment variables (`password_env`, `secret_env`) that
 * are read when the file is applied (passwords) or when the secret is used (webhooks).
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { CONTENT_ACTIONS } from '../capabilities/connectors/content-actions.js';
import { HOURS_PATTERN } from '../gate/rules.js';
import { INPUT_OPS, RISKS } from '../gate/types.js';
import { inputSchemaProblem } from '../capabilities/input-schema.js';
import { ORG_EVENT_TYPES } from '../events/announce.js';

export const key = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be lower-case letters, digits, "_" or "-" (at most 64)');
const email = z.string().trim().toLowerCase().pipe(z.email());
export const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');
const autonomy = z.number().int().min(0).max(3);
const risk = z.enum(['low', 'medium', 'high', 'critical']).describe('low, medium, high or critical');
export const httpUrl = z.url({ protocol: /^https?$/ });
const weekday = z.enum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
const timezone = z.string().refine(isIanaZone, 'must be an IANA time zone name such as Europe/Berlin');

const webhookDelivery = z.strictObject({
  kind: z.literal('webhook').describe('deliveries are POSTed, signed by the Standard Webhooks convention'),
  url: httpUrl.describe('where messages, tasks and task answers are delivered'),
  secret_env: envName.optional().describe('environment variable holding the signing secret (whsec_…)'),
});

const connector = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('content').describe('calls the content service\'s REST API with its API secret'),
    action: z
      .enum(CONTENT_ACTIONS as [string, ...string[]], { error: `must be one of the content actions: ${CONTENT_ACTIONS.join(', ')}` })
      .describe('the content MCP tool to run; the capability\'s input is its arguments'),
  }),
  z.strictObject({
    kind: z.literal('webhook').describe('POSTs the action, signed by the Standard Webhooks convention'),
    url: httpUrl.describe('where the signed action is sent'),
    secret_env: envName.optional().describe('environment variable holding the signing secret (whsec_…)'),
  }),
]);

const inputCondition = z.strictObject({
  path: z.string().regex(/^(\/([^~]|~[01])*)*$/, 'must be a JSON Pointer such as /amount').describe('JSON Pointer into the input, such as /amount'),
  op: z.enum(INPUT_OPS).describe('how the value at path is compared'),
  value: z.unknown().describe('what it is compared with (a list for in)'),
}).refine((condition) => condition.op !== 'in' || Array.isArray(condition.value), { message: 'op in needs a list value', path: ['value'] });

const oneOrMore = <T extends z.ZodType>(item: T) => z.union([item, z.array(item).min(1)]);

const ruleCondition = z
  .strictObject({
    risk: oneOrMore(risk).optional().describe('the capability\'s risk, or any of a list'),
    capability: oneOrMore(key).optional().describe('a capability key, or any of a list'),
    agent: oneOrMore(key).optional().describe('an agent key, or any of a list'),
    weekdays: z.array(weekday).min(1).optional().describe('days (mon … sun) in timezone'),
    hours: z.string().regex(HOURS_PATTERN, 'must be a time range such as "09:00-17:00"').optional().describe('a time range such as "09:00-17:00" in timezone'),
    timezone: timezone.optional().describe('IANA zone for weekdays and hours (required with them)'),
    input: oneOrMore(inputCondition).optional().describe('conditions on the input, all of which must hold'),
  })
  // DESIGN 4.3/4.4: no default timezone anywhere; weekdays and hours must say which zone's clock they mean.
  .refine((when) => !(when.weekdays || when.hours) || when.timezone, { message: 'weekdays and hours need a timezone', path: ['timezone'] });

/** DESIGN 4.4: `decision_ttl` such as `90s`, `15m`, `12h`, `7d`. */
const durationMessage = 'must be a duration such as 90s, 15m, 12h or 7d';
const duration = z
  .string({ error: durationMessage })
  .regex(/^[1-9]\d{0,6}[smhd]$/, durationMessage)
  .transform((text) => Number(text.slice(0, -1)) * { s: 1, m: 60, h: 3600, d: 86_400 }[text.slice(-1) as 's' | 'm' | 'h' | 'd'])
  .refine((seconds) => seconds <= 366 * 86_400, 'must be at most a year');

/** DESIGN 4.8's two-person rule: how many different people must approve (one is the default, not written). */
const approvals = z.number().int().min(2).max(10);

const name = z.string().trim().min(1).max(200);
const description = z.string().max(2000).default('');

/** The file's own field rules, for the console's forms that set the same fields (validated as the file is). */
export const fileFields = { key, envName, httpUrl, autonomy, risk, name } as const;

/**
 * One standing rule, as the file declares it and as the console's rule form is checked (one schema for both).
 * `approvals` is the two-person rule (DESIGN 4.8): how many different people must approve, only with require_approval.
 */
export const standingRuleSchema = z
  .strictObject({
    name: name.describe('shown in verdicts'),
    when: ruleCondition.describe('every condition given must hold'),
    then: z.enum(['deny', 'require_approval', 'allow']).describe('the verdict when it matches'),
    mode: z.enum(['enforce', 'shadow']).default('enforce').describe('shadow rules are recorded, never enforced'),
    approvals: approvals.optional().describe('with require_approval: different people who must approve (2–10; one when absent)'),
  })
  .refine((rule) => rule.approvals === undefined || rule.then === 'require_approval', {
    message: 'approvals goes with then: require_approval only',
    path: ['approvals'],
  });

export type StandingRule = z.infer<typeof standingRuleSchema>;

export const orgFileSchema = z
  .strictObject({
    organization: z
      .strictObject({
        name: name.describe('the organization\'s name'),
        client_autonomy: autonomy.default(1).describe('autonomy of the agent each connected client acts as (0 observe … 3 trusted)'),
        approvals: z
          .strictObject(Object.fromEntries(RISKS.map((tier) => [tier, approvals.optional().describe(`people who must approve a paused ${tier}-risk action`)])))
          .default({})
          .describe('the two-person rule by risk tier, such as { critical: 2 }; a tier not named needs one approval'),
        decide_in_browser: z
          .array(z.enum(RISKS))
          .refine((tiers) => new Set(tiers).size === tiers.length, 'names a risk tier twice')
          .optional()
          .describe('risk tiers whose decisions resolve_decision over MCP hands to the person\'s browser, such as [high, critical]; left as the console set it when absent'),
        in_app_decisions: z
          .boolean()
          .optional()
          .describe('whether an MCP App may resolve a decision inside the AI client (otherwise it opens the decision page); left as the console set it when absent'),
      })
      .optional()
      .describe('the organization itself (created with the first person when absent)'),
    people: z
      .array(
        z.strictObject({
          email: email.describe('sign-in email (case does not matter)'),
          name: name.describe('display name'),
          role: z.enum(['owner', 'admin', 'member']).default('member').describe('owners and admins resolve any decision'),
          password_env: envName.optional().describe('environment variable holding the password (at least 8 characters)'),
        }),
      )
      .default([])
      .describe('people who sign in, consent and decide'),
    spaces: z
      .array(
        z.strictObject({
          key: key.describe('the space\'s stable key'),
          name: name.describe('display name'),
          members: z.array(email).default([]).describe('emails of people declared above'),
        }),
      )
      .default([])
      .describe('where memory, tasks and operations live; members see them'),
    agents: z
      .array(
        z.strictObject({
          key: key.describe('the agent\'s stable key (not "assistant")'),
          name: name.describe('display name'),
          description: description.describe('what the agent does'),
          autonomy: autonomy.default(1).describe('0 observe, 1 propose, 2 act within rules, 3 trusted'),
          responsible: email.optional().describe('the person who resolves its decisions'),
          budget: z.number().int().min(0).optional().describe('cost units per calendar month (UTC); none means unlimited'),
          delivery: webhookDelivery.optional().describe('where its work is delivered; none means it polls'),
        }),
      )
      .default([])
      .describe('agents that receive messages and tasks and run capabilities'),
    capabilities: z
      .array(
        z.strictObject({
          key: key.describe('the capability\'s stable key'),
          name: name.optional().describe('display name (default: the key)'),
          description: description.describe('what it does'),
          risk,
          cost: z.number().int().min(0).default(0).describe('units charged to the agent\'s budget per run'),
          connector: connector.describe('what runs the action'),
          input_schema: z.record(z.string(), z.unknown()).optional().describe('JSON Schema the input must satisfy'),
          enabled: z.boolean().default(true).describe('a disabled capability is always denied'),
        }),
      )
      .default([])
      .describe('actions agents may run, each through the gate'),
    rules: z
      .array(standingRuleSchema)
      .default([])
      .describe('standing rules the gate applies, in order; deny beats require_approval beats allow'),
    event_endpoints: z
      .array(
        z.strictObject({
          key: key.describe('the endpoint\'s stable key'),
          url: httpUrl.describe('where the events are POSTed, signed by the Standard Webhooks convention'),
          events: z
            .array(z.enum(ORG_EVENT_TYPES, { error: `must be one of the event types: ${ORG_EVENT_TYPES.join(', ')}` }))
            .default([])
            .describe('the event types it receives; none listed means all'),
          secret_env: envName
            .optional()
            .describe('environment variable holding the signing secret (whsec_…); without it, a secret generated on the console is kept'),
          enabled: z.boolean().default(true).describe('a disabled endpoint is sent nothing'),
        }),
      )
      .default([])
      .describe('where the organization\'s events go as Standard Webhooks (README: Events)'),
    decision_ttl: duration.prefault('7d').describe('when an unresolved decision expires: 90s, 15m, 12h, 7d (default 7d)'),
  })
  .superRefine((file, ctx) => {
    file.capabilities.forEach((capability, index) => {
      const problem = capability.input_schema && inputSchemaProblem(capability.input_schema);
      if (problem) ctx.addIssue({ code: 'custom', path: ['capabilities', index, 'input_schema'], message: `is not a usable JSON Schema: ${problem}` });
    });
    for (const list of ['people', 'spaces', 'agents', 'capabilities', 'event_endpoints'] as const) {
      const seen = new Set<string>();
      file[list].forEach((item, index) => {
        const id = 'email' in item ? item.email : item.key;
        if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [list, index], message: `duplicate ${id}` });
        seen.add(id);
      });
    }
    if (file.agents.some((agent) => agent.key === 'assistant')) {
      ctx.addIssue({ code: 'custom', path: ['agents'], message: 'the key "assistant" belongs to the built-in assistant' });
    }
  });

export type OrgFile = z.infer<typeof orgFileSchema>;

/**
 * The file's JSON Schema (draft 2020-12), generated from the zod schema that validates it, so an editor's
 * checks and `org apply`'s never disagree on a field. Cross-field rules (duplicates, a timezone for hours,
 * a usable `input_schema`) are `org apply`'s alone.
 */
export function orgFileJsonSchema(): Record<string, unknown> {
  return {
    title: 'Atrium organization file',
    description: 'People, spaces, agents, capabilities and standing rules; applied by `npx atrium org apply FILE` or ATRIUM_ORG_FILE.',
    ...z.toJSONSchema(orgFileSchema, { io: 'input' }),
  };
}

/** A file that cannot be applied; `problems` lists every one, each with where it is. */
export class OrgFileError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`organization file ${source} is invalid:\n  ${problems.join('\n  ')}`);
    this.name = 'OrgFileError';
  }
}

export function parseOrgFile(text: string, source = 'organization file'): OrgFile {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    if (error instanceof YAMLParseError) throw new OrgFileError(source, [error.message]);
    throw error;
  }
  const parsed = orgFileSchema.safeParse(document ?? {});
  if (!parsed.success) {
    throw new OrgFileError(
      source,
      parsed.error.issues.map((issue) => `${issue.path.join('.') || '(top level)'}: ${issue.message}`),
    );
  }
  return parsed.data;
}

export async function readOrgFile(file: string): Promise<OrgFile> {
  return parseOrgFile(await readFile(file, 'utf8'), file);
}

function isIanaZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone.includes('/') || zone === 'UTC';
  } catch {
    return false;
  }
}
