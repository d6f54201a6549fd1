/**
 * The content MCP server (interface B; spec 4.3, DESIGN 3 and 5): the 19 tools at `{base_url}/mcp`, protocol
 * 2025-03-26, bearer `CONTENT_API_SECRET`. Transport, sessions and host checks come from platform/mcp; this
 * module only says what is served and as whom writes are recorded.
 */
import { createHash } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/server';
import type { HttpServer } from '../../platform/http.js';
import { registerMcpEndpoint, type McpCall, type McpClient, type McpEndpointOptions } from '../../platform/mcp/index.js';
import type { Actor } from '../actor.js';
import type { ContentContext } from '../context.js';
import { contentErrors } from '../errors.js';
import { isAuthenticated } from '../rest/auth.js';
import { activityTools } from './activity-tools.js';
import { assetTools } from './asset-tools.js';
import { blogTools } from './blog-tools.js';
import { changelogTools } from './changelog-tools.js';
import { roadmapTools } from './roadmap-tools.js';
import { searchTools } from './search-tools.js';
import { registerNoOAuth } from './no-oauth.js';
import { buildToolRegistry, type ToolRegistry } from './tools.js';

/** Spec 4.3 and 9: a fixed server name, version 1.0.0, protocol 2025-03-26. */
export const CONTENT_MCP_INFO = { name: 'atrium-content', version: '1.0.0' } as const;
export const CONTENT_MCP_PROTOCOL = '2025-03-26';
/** DESIGN 4.9: the spec's revision first (what an unknown version is answered); newer ones on request. */
export const CONTENT_MCP_PROTOCOLS = [CONTENT_MCP_PROTOCOL, '2025-06-18', '2025-11-25'] as const;
export const CONTENT_MCP_MODERN_PROTOCOLS = ['2026-07-28'] as const;
export const CONTENT_MCP_PATH = '/mcp';

export const contentTools = [...blogTools, ...changelogTools, ...roadmapTools, ...searchTools, ...assetTools, ...activityTools];

export function registerContentMcp(app: HttpServer, ctx: ContentContext): void {
  registerMcpEndpoint(app, contentMcpEndpoint(ctx));
  registerNoOAuth(app);
}

/** Rows of the content endpoint in mcp_sessions. */
export const CONTENT_MCP_SESSION_SCOPE = 'content';

/** The endpoint's options; built once per service (the tool registry with its JSON Schemas included). */
export function contentMcpEndpoint(ctx: ContentContext): McpEndpointOptions<void> {
  const registry = buildToolRegistry(contentTools, ctx.log);
  const secretFingerprint = `secret:${createHash('sha256').update(`atrium-content-mcp|${ctx.apiSecret}`).digest('base64url')}`;
  return {
    path: CONTENT_MCP_PATH,
    db: ctx.db,
    sessionScope: CONTENT_MCP_SESSION_SCOPE,
    serverInfo: { ...CONTENT_MCP_INFO },
    capabilities: { tools: {} },
    protocolVersions: CONTENT_MCP_PROTOCOLS,
    modernProtocolVersions: CONTENT_MCP_MODERN_PROTOCOLS,
    hosts: { publicUrls: [ctx.config.publicUrl], bindHost: ctx.config.host },
    // Sessions are cached in memory; ending one on any process drops it everywhere through the change feed.
    changes: ctx.changes,
    authenticate(request) {
      // DESIGN 3: the same bearer secret as REST writes; 401 carries `WWW-Authenticate: Bearer` (no
      // resource_metadata: this is no OAuth resource) and a body saying which secret to send.
      if (!isAuthenticated(ctx, request)) throw contentErrors.unauthorized();
    },
    // A session belongs to the secret it was opened under: once the secret is changed (rotated after a
    // leak), sessions opened with the old one answer 404 and the client must initialize again.
    principalId: () => secretFingerprint,
    installHandlers: (server, call) => installToolHandlers(server, registry, ctx, call),
  };
}

function installToolHandlers(server: Server, registry: ToolRegistry, ctx: ContentContext, { client }: McpCall<void>): void {
  const call = { ctx, actor: agentActor(client) };
  server.setRequestHandler('tools/list', () => ({ tools: registry.tools }));
  server.setRequestHandler('tools/call', (request) => registry.call(request.params.name, request.params.arguments, call));
}

/**
 * DESIGN 3: MCP writes are recorded as `actor_type: agent` with `actor_id` = the `clientInfo.name` sent in
 * `initialize` (or, in `2026-07-28`, in the request's `_meta`), cut to the 200 characters an actor id may have
 * (DESIGN 3, Actor).
 */
export function agentActor(client: Pick<McpClient, 'name'>): Actor {
  return { actor_id: client.name.trim().slice(0, 200) || 'unnamed-mcp-client', actor_type: 'agent' };
}
