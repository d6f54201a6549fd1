/**
 * The three ways a client speaks MCP to Atrium (DESIGN 4.9): the 2025 revisions over a session opened with
 * `initialize`, and `2026-07-28` without sessions, its version, client and capabilities in every request's
 * `_meta`. The official SDK client at a chosen revision, and raw modern requests for the rules it would hide.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  Client,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';

export const MODERN = '2026-07-28';

export interface RevisionClient {
  client: Client;
  close(): Promise<void>;
}

/**
 * The SDK client speaking exactly `revision`: a 2025 revision is the only one it offers in `initialize`; the
 * modern one is pinned, so `connect` fails unless `server/discover` offers it (no fallback).
 */
export async function connectAt(mcpUrl: string, headers: Record<string, string>, revision: string, name = 'revision-client'): Promise<RevisionClient> {
  const client =
    revision === MODERN
      ? new Client({ name, version: '2.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } })
      : new Client({ name, version: '2.0.0' }, { supportedProtocolVersions: [revision] });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers } });
  await client.connect(transport);
  return {
    client,
    async close() {
      if (revision !== MODERN) await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** The per-request envelope of a 2026-07-28 request (`_meta`), as the SDK client attaches it. */
export function envelope(revision = MODERN, name = 'raw-modern-client') {
  return {
    [PROTOCOL_VERSION_META_KEY]: revision,
    [CLIENT_INFO_META_KEY]: { name, version: '0.1.0' },
    [CLIENT_CAPABILITIES_META_KEY]: {},
  };
}

/** A 2026-07-28 request: body with the envelope, and the standard headers naming its version, method and tool. */
export function modernRequest(method: string, params: Record<string, unknown> = {}, options: { revision?: string; name?: string; id?: number } = {}) {
  const revision = options.revision ?? MODERN;
  const body = { jsonrpc: '2.0', id: options.id ?? 1, method, params: { ...params, _meta: envelope(revision, options.name) } };
  const headers: Record<string, string> = { 'mcp-protocol-version': revision, 'mcp-method': method };
  if (typeof params.name === 'string') headers['mcp-name'] = params.name;
  return { body, headers };
}

/** What an Atrium endpoint answers to `server/discover`: the modern revision, tools, and who it is in `_meta`. */
export function discoverResult(serverName: string) {
  return {
    supportedVersions: [MODERN],
    capabilities: { tools: {} },
    _meta: { [SERVER_INFO_META_KEY]: { name: serverName, version: '1.0.0' } },
  };
}
