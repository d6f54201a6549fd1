/**
 * Which POSTs can skip the SDK's revision routing. Revision 2026-07-28 (SEP-2575) is claimed per request, in
 * `params._meta` or by the `MCP-Protocol-Version` header; the SDK's `isLegacyRequest` decides, but it builds a web
 * Request and validates every message with zod, a cost every 2025-era call would otherwise pay.
 */
/** The first sessionless revision; the SDK compares revisions as strings (its `isModernProtocolVersion`). */
const FIRST_MODERN_REVISION = '2026-07-28';

const JSON_RPC_MESSAGE_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * False only when `isLegacyRequest` would certainly answer legacy: the `MCP-Protocol-Version` header names no
 * modern revision and every message is a JSON-RPC request or notification the SDK's strict schemas accept,
 * without any `_meta` (where a claim would be). Anything else, a claim or a malformed message alike, is left to
 * the SDK, so it still goes wherever the SDK sends it.
 */
export function mayBeModern(protocolVersionHeader: string | string[] | undefined, messages: readonly unknown[]): boolean {
  const header = protocolVersionHeader;
  if (header !== undefined && (typeof header !== 'string' || header.trim() >= FIRST_MODERN_REVISION)) return true;
  return !messages.every(isClaimlessMessage);
}

function isClaimlessMessage(message: unknown): boolean {
  if (!isObject(message) || message.jsonrpc !== '2.0' || typeof message.method !== 'string') return false;
  if (!Object.keys(message).every((key) => JSON_RPC_MESSAGE_KEYS.has(key))) return false;
  if ('id' in message && !(typeof message.id === 'string' || Number.isInteger(message.id))) return false;
  return message.params === undefined || (isObject(message.params) && !('_meta' in message.params));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
