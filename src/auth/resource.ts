/**
 * The one protected resource this authorization server issues tokens for: the org MCP endpoint, and the
 * URL of its protected resource metadata (RFC 9728), which the endpoint's 401 challenge names.
 */
import type { AuthConfig } from './context.js';
import { InvalidTarget } from './errors.js';

/** Spec 2.4: the value clients send as `resource`. */
export function mcpResource(config: AuthConfig): string {
  return `${config.publicUrl}/mcp`;
}

/** Spec 4.1: the protected resource metadata lives at this path on the MCP host. */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

/** RFC 9728 §5.1: the URL the MCP endpoint's 401 challenge names as `resource_metadata`. */
export function resourceMetadataUrl(config: AuthConfig): string {
  return new URL(mcpResource(config)).origin + RESOURCE_METADATA_PATH;
}

/**
 * RFC 8707 §2 and spec 5.1: `resource` is sent in both the authorize and the token request and must name
 * our MCP resource, so a token can never be replayed at another server.
 */
export function checkResource(config: AuthConfig, resource: string | undefined): string {
  if (!resource) throw new InvalidTarget(`resource is required; use ${mcpResource(config)}`);
  if (resource !== mcpResource(config)) throw new InvalidTarget(`unknown resource ${resource}; use ${mcpResource(config)}`);
  return resource;
}
