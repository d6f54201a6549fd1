/**
 * The OAuth 2.1 authorization server (spec 2.4, 2.5, 5.1; DESIGN 4.1), as the service hosting it uses it:
 * its routes, the token check of the MCP endpoint, the consent and connections the people's pages show,
 * and the clean-up of spent rows. It needs only an `AuthContext` (context.ts), never the host's own modules.
 */
export { registerAuthRoutes } from './routes.js';
export type { AuthEvent } from './context.js';
export { approveAuthorizationRequest, denyAuthorizationRequest, getAuthorizationRequest, type PendingAuthorization } from './authorization.js';
export { disconnectClient, listConnections, revokePersonGrants, type Connection } from './grants.js';
export { deleteSpentOAuthRows, type OAuthSweep } from './retention.js';
export { mcpResource, resourceMetadataUrl } from './resource.js';
export { isScope, SCOPES, type Scope } from './scopes.js';
export { createVerifiedTokens, verifyAccessToken, type Changed } from './tokens.js';
