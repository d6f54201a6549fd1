/** service_context (DESIGN 4.3, spec 4.2 rule 2): any valid token may call it, and it is to be called first. */
import { z } from 'zod';
import { describeServiceContext, serviceContextRecord } from '../service-context.js';
import { defineOrgTool } from './tools.js';

export const contextTools = [
  defineOrgTool({
    name: 'service_context',
    description:
      'Call this first. Returns who you act for (person), the organization, the agents you can reach, the spaces ' +
      'work can be placed in (spaces: pass a space id to other tools; if the list is empty, stop and tell the person), ' +
      'the OAuth scopes actually granted to you, and server_time (UTC). No timezone is assumed: give an IANA zone in ' +
      'anything scheduled. Ids are opaque; never construct them.',
    scope: null,
    needsSpace: false,
    effect: 'read',
    input: z.object({}).strict(),
    output: serviceContextRecord,
    annotations: { openWorldHint: false },
    run: (_args, { ctx, principal }) => describeServiceContext(ctx, principal),
  }),
];
