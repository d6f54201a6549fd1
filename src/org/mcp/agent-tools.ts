/** list_agents and message_agent (DESIGN 4.3, 4.5): the organization's agents, and work sent to one of them. */
import { z } from 'zod';
import { agentRecord, findAgent, listAgents, webhookTarget } from '../agents/records.js';
import { orgErrors } from '../errors.js';
import { cachedOrgRead } from '../read-cache.js';
import { id, text } from '../fields.js';
import { defineOrgTool } from './tools.js';
import { messageKind } from '../delivery/kinds.js';

export const agentTools = [
  defineOrgTool({
    name: 'list_agents',
    description:
      "Lists the organization's agents: the built-in assistant (ask it with the ask tool), the agents the organization " +
      'declared, and your own connected applications. Each has its id (pass it to message_agent), kind, autonomy, ' +
      'status (active or disabled), whether it can be messaged, and its usage this calendar month (UTC) against its budget.',
    scope: 'service:ask',
    needsSpace: true,
    effect: 'read',
    input: z.object({}).strict(),
    output: z.object({ agents: z.array(agentRecord) }),
    annotations: { idempotentHint: true, openWorldHint: false },
    run: async (_args, { ctx, principal }) => ({ agents: await listAgents(ctx.db, principal.personId) }),
  }),
  defineOrgTool({
    name: 'message_agent',
    description:
      'Sends an agent something to act on now, placed in one of your spaces, and returns an operation: the agent answers ' +
      'at once (the operation succeeds with its answer as result) or works on and reports progress (poll get_operation). ' +
      'Take agent_id from service_context or list_agents; the assistant is asked with the ask tool instead. Fails ' +
      '`undeliverable` when the agent cannot be reached for 10 minutes.',
    scope: 'agents:message',
    needsSpace: true,
    effect: 'work',
    input: z
      .object({
        agent_id: id().describe('The agent, from service_context or list_agents.'),
        text: text().min(1).max(20_000).describe('What the agent should do or answer.'),
        space_id: id().describe('The space the work belongs to, from service_context.'),
      })
      .strict(),
    annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
    async run({ agent_id, text, space_id }, { ctx, principal, db }) {
      const agent = await cachedOrgRead(ctx, db, 'directory', 'findAgent', { agent_id }, () => findAgent(db, agent_id));
      // A connected client of someone else is not theirs to see (DESIGN 4.3: never a leak).
      if (!agent || (agent.kind === 'client' && agent.responsiblePersonId !== principal.personId)) throw orgErrors.notFound('agent');
      webhookTarget(agent, ctx.config.resolveSecret);
      return messageKind.start(ctx, db, {
        personId: principal.personId,
        clientId: principal.clientId,
        agentId: agent.id,
        spaceId: space_id,
        input: { text },
        held: { agent },
      });
    },
  }),
];
