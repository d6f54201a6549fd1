/**
 * list_capabilities, describe_capability, execute_capability (DESIGN 4.3): discovering and running the
 * organization's capabilities through the runtime gate, as the calling client's own agent.
 */
import { z } from 'zod';
import { executeCapability } from '../capabilities/execute.js';
import { operationRecord } from '../operations/operations.js';
import { id, jsonObject, text } from '../fields.js';
import { defineOrgTool } from './tools.js';
import { cachedOrgRead } from '../read-cache.js';
import { describedCapability, clientAgentAndCapability, describeCapability } from '../capabilities/gate-inputs.js';
import { listCapabilities, capabilityRecord, gateVerdictRecord } from '../capabilities/catalogue.js';

const capabilityId = id();

/**
 * execute_capability answers with the operation, or — for `dry_run: true` — with `{dry_run: true, verdict}`
 * and no operation: one object schema covering both, so every operation field is optional here.
 */
const executeOutput = operationRecord.partial().extend({
  dry_run: z.literal(true).optional().describe('Present on a dry run, which started nothing'),
  verdict: gateVerdictRecord.optional().describe("A dry run's verdict: what the gate would decide now"),
});

export const capabilityTools = [
  defineOrgTool({
    name: 'list_capabilities',
    description:
      "Lists the organization's connected capabilities (actions on the world such as publishing a post or calling a " +
      'webhook), each with its risk tier, cost in budget units and the JSON Schema its input must match. `query` ' +
      'keeps those whose key, name or description contain every word.',
    scope: 'integrations:read',
    needsSpace: false,
    effect: 'read',
    input: z.object({ query: text().max(200).optional() }).strict(),
    output: z.object({ capabilities: z.array(capabilityRecord) }),
    annotations: { idempotentHint: true, openWorldHint: false },
    run: async ({ query }, { ctx }) => ({ capabilities: await listCapabilities(ctx.db, query) }),
  }),

  defineOrgTool({
    name: 'describe_capability',
    description:
      "Describes one capability and what the organization's runtime gate would decide were you to run it now: allow, " +
      'require_approval (the action would pause for a person) or deny, with the reasons. Rules about specific input ' +
      'values are judged against an empty input here; execute_capability with dry_run judges real input.',
    scope: 'integrations:read',
    needsSpace: false,
    effect: 'read',
    input: z.object({ capability_id: capabilityId }).strict(),
    output: describedCapability,
    annotations: { idempotentHint: false, openWorldHint: false },
    run: ({ capability_id }, { ctx, principal }) => describeCapability(ctx.db, capability_id, principal),
  }),

  defineOrgTool({
    name: 'execute_capability',
    description:
      'Runs a capability in a space, through the runtime gate: the organization weighs your autonomy, the risk, its ' +
      'standing rules and your budget. Returns an operation: succeeded with the connector\'s answer, failed (denied_by_rule, ' +
      'connector_failed, or later denied/expired), or paused awaiting a person\'s decision — a normal outcome: poll ' +
      'get_operation. `input` must match the capability\'s input_schema (an invalid field is an error naming it). ' +
      'With dry_run: true nothing runs and the answer is only the verdict.',
    scope: 'integrations:act',
    needsSpace: true,
    effect: 'work',
    input: z
      .object({
        capability_id: capabilityId,
        input: jsonObject().describe("The capability's input, matching its input_schema"),
        space_id: id(),
        dry_run: z.boolean().default(false),
      })
      .strict(),
    output: executeOutput,
    startsNothing: ({ dry_run }) => dry_run,
    annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
    async run({ capability_id, input, space_id, dry_run }, { ctx, principal, db }) {
      const { personId, clientId } = principal;
      const { agent, capability } = await cachedOrgRead(ctx, db, 'directory', 'clientAgentAndCapability', { personId, clientId, capability_id }, () =>
        clientAgentAndCapability(db, { personId, clientId }, capability_id),
      );
      const started = await executeCapability(ctx, db, {
        capability,
        input,
        spaceId: space_id,
        dryRun: dry_run,
        agentId: agent.id,
        personId: principal.personId,
        clientId: principal.clientId,
      });
      return 'operationId' in started ? started.operationId : { result: { dry_run: true as const, verdict: started.dryRun } };
    },
  }),
];
