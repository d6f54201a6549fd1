/** How the pages put into words what they show: times, connected clients, and who resolved a decision. */
import type { ResolvedByRecord } from '../operations/operations.js';

/** The pages' name for how a timestamp is written for people; emails write it the same way (platform/time.ts). */
export { formatTime } from '../../platform/time.js';

/** "the client Claude (client id atr_cl_…)": a client named as it named itself, told apart from others by its id. */
export function theClient(client: { id: string; name: string | null }): string {
  return `the client ${client.name ?? 'without a name'} (client id ${client.id})`;
}

/** "Ada, in the inbox" or "Ada, through the client Claude (client id …)". */
export function describeResolver(by: ResolvedByRecord): string {
  if (by.via === 'inbox') return `${by.name}, in the inbox`;
  if (by.via === 'client' && by.client) return `${by.name}, through ${theClient(by.client)}`;
  return `${by.name}, through an MCP client`;
}
