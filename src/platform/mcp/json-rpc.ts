/**
 * JSON-RPC error answers the MCP endpoint gives at the HTTP level, before any server instance runs (bad
 * session, foreign host, oversized batch, unparsable body). Same shape as the SDK transport's own refusals, so
 * an MCP client sees one kind of error whoever refused.
 */
import type { FastifyReply } from 'fastify';

/** JSON-RPC 2.0 §5.1 codes, and the codes the MCP SDK uses for transport-level refusals. */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  invalidParams: -32602,
  /** SDK transport: generic server error (bad/missing session header, not acceptable, forbidden host). */
  serverError: -32000,
  /** SDK transport: unknown or ended session. */
  sessionNotFound: -32001,
} as const;

export function sendRpcError(reply: FastifyReply, status: number, code: number, message: string, id: string | number | null = null): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }));
}
