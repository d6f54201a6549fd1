/**
 * The discovery documents: authorization server metadata (RFC 8414, spec 2.5) and the MCP endpoint's
 * protected resource metadata (RFC 9728, spec 2.4).
 */
import type { AuthConfig } from './context.js';
import { mcpResource } from './resource.js';
import { SCOPE_NAMES } from './scopes.js';

/** Paths of the endpoints on the authorization server's origin. */
export const AUTH_PATHS = {
  metadata: '/.well-known/oauth-authorization-server',
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
  jwks: '/oauth/jwks',
} as const;

/** Spec 2.5 exactly, plus the scopes, RFC 9207's `iss` support and the revocation auth method. */
export function authorizationServerMetadata(config: AuthConfig) {
  const issuer = config.authPublicUrl;
  return {
    issuer,
    authorization_endpoint: issuer + AUTH_PATHS.authorize,
    token_endpoint: issuer + AUTH_PATHS.token,
    registration_endpoint: issuer + AUTH_PATHS.register,
    revocation_endpoint: issuer + AUTH_PATHS.revoke,
    jwks_uri: issuer + AUTH_PATHS.jwks,
    scopes_supported: SCOPE_NAMES,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    // RFC 8414 §2 would otherwise default this to client_secret_basic.
    revocation_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
  };
}

/** Spec 2.4. */
export function protectedResourceMetadata(config: AuthConfig) {
  return {
    resource: mcpResource(config),
    authorization_servers: [config.authPublicUrl],
    scopes_supported: SCOPE_NAMES,
    bearer_methods_supported: ['header'],
  };
}
