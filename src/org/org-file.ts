/**
 * The organization file (DESIGN section 4.2): YAML declaring the organization, people, spaces, agents,
 * capabilities and standing rules. This module parses and validates it; `apply-org-file.ts` writes it.
 *
 * Secrets never appear in the file: it names environment variables (`password_env`, `secret_env`) that
 * are read when the file is applied (passwords) or when the secret is used (webhooks).
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { CONTENT_ACTIONS } from './connectors/content-actions.js';
import { HOURS_PATTERN } from './gate/rules.js';
import { INPUT_OPS } from './gate/types.js';
import { inputSchemaProblem } from './input-schema.js';

const key = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be lower-case letters, digits, "_" or "-" (at most 64)');
const email = z.string().trim().toLowerCase().pipe(z.email());
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');
const autonomy = z.number().int().min(0).max(3);
const risk = z.enum(['low', 'medium', 'high', 'critical']);
const httpUrl = z.url({ protocol: /^https?$/ });
const weekday = z.enum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
const timezone = z.string().refine(isIanaZone, 'must be an IANA time zone name such as Europe/Berlin');

const webhookDelivery = z.strictObject({ kind: z.literal('webhook'), url: httpUrl, secret_env: envName.optional() });

const connector = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('content'),
    action: z.enum(CONTENT_ACTIONS as [string, ...string[]], { error: `must be one of the content actions: ${CONTENT_ACTIONS.join(', ')}` }),
  }),
  z.strictObject({ kind: z.literal('webhook'), url: httpUrl, secret_env: envName.optional() }),
]);

const inputCondition = z.strictObject({
  path: z.string().regex(/^(\/([^~]|~[01])*)*$/, 'must be a JSON Pointer such as /amount'),
  op: z.enum(INPUT_OPS),
  value: z.unknown(),
}).refine((condition) => condition.op !== 'in' || Array.isArray(condition.value), { message: 'op in needs a list value', path: ['value'] });

const ruleCondition = z
  .strictObject({
    risk: z.union([risk, z.array(risk).min(1)]).optional(),
    capability: z.union([key, z.array(key).min(1)]).optional(),
    agent: z.union([key, z.array(key).min(1)]).optional(),
    weekdays: z.array(weekday).min(1).optional(),
    hours: z.string().regex(HOURS_PATTERN, 'must be a time range such as "09:00-17:00"').optional(),
    timezone: timezone.optional(),
    input: z.union([inputCondition, z.array(inputCondition).min(1)]).optional(),
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

export const orgFileSchema = z
  .strictObject({
    organization: z
      .strictObject({ name: z.string().trim().min(1).max(200), client_autonomy: autonomy.default(1) })
      .optional(),
    people: z
      .array(
        z.strictObject({
          email,
          name: z.string().trim().min(1).max(200),
          role: z.enum(['owner', 'admin', 'member']).default('member'),
          password_env: envName.optional(),
        }),
      )
      .default([]),
    spaces: z
      .array(z.strictObject({ key, name: z.string().trim().min(1).max(200), members: z.array(email).default([]) }))
      .default([]),
    agents: z
      .array(
        z.strictObject({
          key,
          name: z.string().trim().min(1).max(200),
          description: z.string().max(2000).default(''),
          autonomy: autonomy.default(1),
          responsible: email.optional(),
          budget: z.number().int().min(0).optional(),
          delivery: webhookDelivery.optional(),
        }),
      )
      .default([]),
    capabilities: z
      .array(
        z.strictObject({
          key,
          name: z.string().trim().min(1).max(200).optional(),
          description: z.string().max(2000).default(''),
          risk,
          cost: z.number().int().min(0).default(0),
          connector,
          input_schema: z.record(z.string(), z.unknown()).optional(),
          enabled: z.boolean().default(true),
        }),
      )
      .default([]),
    rules: z
      .array(
        z.strictObject({
          name: z.string().trim().min(1).max(200),
          when: ruleCondition,
          then: z.enum(['deny', 'require_approval', 'allow']),
          mode: z.enum(['enforce', 'shadow']).default('enforce'),
        }),
      )
      .default([]),
    decision_ttl: duration.default(604_800),
  })
  .superRefine((file, ctx) => {
    file.capabilities.forEach((capability, index) => {
      const problem = capability.input_schema && inputSchemaProblem(capability.input_schema);
      if (problem) ctx.addIssue({ code: 'custom', path: ['capabilities', index, 'input_schema'], message: `is not a usable JSON Schema: ${problem}` });
    });
    for (const list of ['people', 'spaces', 'agents', 'capabilities'] as const) {
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
