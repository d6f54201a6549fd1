/**
 * MCP over Streamable HTTP for any Atrium service: one call mounts an endpoint whose sessions live in the
 * `mcp_sessions` table, so any process serves any request (DESIGN 6).
 *
 * ```ts
 * registerMcpEndpoint(app, {
 *   path: '/mcp',
 *   db,
 *   sessionScope: 'org',                                  // rows of this endpoint in mcp_sessions
 *   serverInfo: { name: 'atrium-org', version: '1.0.0' },
 *   capabilities: { tools: {} },
 *   protocolVersions: ['2025-06-18'],                     // pinned; initialize answers the first otherwise
 *   modernProtocolVersions: ['2026-07-28'],               // optional: sessionless requests, through the SDK's
 *                                                         // createMcpHandler (server/discover, `_meta` envelope)
 *   hosts: { publicUrls: [config.publicUrl], bindHost: config.host },  // Host/Origin allowed (403 otherwise)
 *   authenticate: async (request, reply) => verifyAccessToken(request, reply),  // set WWW-Authenticate on
 *                                                         // reply, then throw an AppError (401) to refuse
 *   principalId: (token) => token.subject,                // a session is only usable by its principal
 *   installHandlers(server, { session, principal }) {     // per request: cheap closures over prepared data
 *     server.setRequestHandler('tools/list', () => ({ tools: prebuiltTools }));
 *     server.setRequestHandler('tools/call', (request) => callTool(request.params, principal, session));
 *   },
 *   // optional: maxBodyBytes (1 MiB), maxBatchLength (25), keepAliveMs, changes (a ChangeFeed: sessions cached
 *   // in memory, dropped on every process when one ends)
 * });
 * ```
 *
 * What the endpoint does for you: Host/Origin checks (403), authentication before the body is read, body and
 * batch limits (413), JSON-RPC parse errors, the session rules (initialize creates the session and answers
 * `Mcp-Session-Id`; missing → 400; unknown, ended or another principal's → 404; DELETE ends it), the response
 * mode from Accept (JSON or SSE; 406 when neither), a GET stream for server messages, and a fresh `Server` per
 * request with a fresh transport (a JsonExchange for a session's JSON answers, the SDK's stateless transport
 * otherwise), answered through `reply.send` so Fastify's hooks run.
 */
export { registerMcpEndpoint, type McpCall, type McpClient, type McpEndpointOptions } from './endpoint.js';
