/**
 * list_decisions and resolve_decision (DESIGN 4.3, 4.4): governance over paused actions, for a person who
 * may resolve them (the agent's responsible person, or an owner/admin) through a client holding
 * `governance:admin` — never the client whose action it is.
 */
import { z } from 'zod';
import { resolveDecision } from '../decisions/resolve.js';
import { getPerson } from '../people/records.js';
import { orgErrors } from '../errors.js';
import { id, instant, text } from '../fields.js';
import type { OrgToolCall } from './tools.js';
import { defineOrgTool } from './tools.js';
import { DECISION_STATUSES } from '../decisions/states.js';
import { decisionRecord, decisionsFor, resolvedDecision, type Resolver } from '../decisions/records.js';
import { refuseIfDecidedInBrowser } from '../settings/decision-settings.js';

async function resolverOf({ db, principal }: OrgToolCall): Promise<Resolver> {
  // call.db: inside resolve_decision it is the idempotency key's transaction (PGlite has one connection).
  const person = await getPerson(db, principal.personId);
  if (!person) throw orgErrors.notFound('person');
  return { person, clientId: principal.clientId };
}

export const decisionTools = [
  defineOrgTool({
    name: 'list_decisions',
    description:
      'Lists decisions you may resolve: actions paused by the runtime gate awaiting a person, newest first, each with ' +
      'the capability, the exact input, the agent, the risk and the reasons it paused. `status` defaults to pending. ' +
      'Actions this client asked for itself are not listed: another person or client must resolve them.',
    scope: 'governance:admin',
    needsSpace: false,
    effect: 'read',
    input: z.object({ status: z.enum([...DECISION_STATUSES, 'all']).default('pending') }).strict(),
    output: z.object({ decisions: z.array(decisionRecord) }),
    annotations: { idempotentHint: true, openWorldHint: false },
    run: async ({ status }, call) => ({ decisions: await decisionsFor(call.ctx.db, await resolverOf(call), { status }) }),
  }),

  defineOrgTool({
    name: 'resolve_decision',
    description:
      'Approves or denies a pending decision. Approving runs exactly the paused action, once; denying fails its ' +
      'operation with `denied`. A decision already resolved or expired is refused with invalid_state. A decision whose ' +
      '`approvals_required` is more than one (the two-person rule) stays pending until that many different people ' +
      'approved; the person the action was asked for cannot approve it (forbidden) but may deny it, and any deny ends ' +
      'it. With ' +
      '`remember` (approve only), the organization also learns to allow this agent this capability without asking ' +
      'again — until `remember.until` if given, and only for this same input if `remember.same_input` is true; not on ' +
      'a decision that needs more than one approval.',
    scope: 'governance:admin',
    needsSpace: false,
    effect: 'write',
    input: z
      .object({
        decision_id: id(),
        outcome: z.enum(['approve', 'deny']),
        note: text().max(2000).optional(),
        remember: z
          .object({
            until: instant().optional(),
            same_input: z.boolean().optional(),
          })
          .strict()
          .optional(),
      })
      .strict(),
    output: resolvedDecision,
    madeOf: ({ decision }) => ({ id: decision.id, spaceId: decision.action.space_id }),
    annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
    async run({ decision_id, outcome, note, remember }, call) {
      const resolver = await resolverOf(call);
      const visible = await decisionsFor(call.db, { ...resolver, clientId: null }, { id: decision_id, status: 'all' });
      if (visible.length && !(await decisionsFor(call.db, resolver, { id: decision_id, status: 'all' })).length) {
        // DESIGN 4.4: never the client whose action it is, whatever its scopes.
        throw orgErrors.forbidden('this client asked for this action itself, so it cannot resolve it: another person or client must');
      }
      if (visible.length) await refuseIfDecidedInBrowser(call.db, visible[0], call.ctx.config.publicUrl);
      return resolveDecision(call.db, { decisionId: decision_id, outcome, note, remember }, resolver);
    },
  }),
];
