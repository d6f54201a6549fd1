/**
 * Bearer authentication of the org MCP endpoint (spec 4.2 rule 1, 5.1, 7.1; RFC 6750, RFC 8707, RFC 9728)
 * with the SDK's resource-server helpers over the authorization server's token check:
 *
 * - the token is read from the Authorization header only; `?access_token=` is never looked at (RFC 6750
 *   §2.3 is not supported), so such a request is simply unauthenticated;
 * - every refusal answers 401 with `WWW-Authenticate: Bearer … resource_metadata="<protected resource
 *   metadata URL>"`, from which a client discovers the authorization server;
 * - RFC 6750 §3.1: a request with no authentication at all (no Authorization header, or another scheme
 *   than Bearer) gets the challenge without an `error` parameter and no error body; a presented bearer
 *   token that is unknown, expired, revoked, malformed or issued for another resource gets
 *   `error="invalid_token"` (the SDK's answer). A malformed `Bearer` header counts as a presented token:
 *   401 `invalid_token` rather than §3.1's 400 `invalid_request`, so the client restarts discovery.
 */
import {
  bearerAuthChallengeResponse,
  OAuthError,
  OAuthErrorCode,
  verifyBearerToken,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import { mcpResource, resourceMetadataUrl, verifyAccessToken } from '../../auth/index.js';
import type { OrgContext } from '../context.js';
import type { OrgPrincipal } from './tools.js';

/** A refused request, carrying the SDK's ready answer (status, challenge header, OAuth error body). */
export class BearerRefusal extends Error {
  constructor(readonly answer: Response) {
    super('bearer authentication refused');
    this.name = 'BearerRefusal';
  }
}

export async function authenticateBearer(ctx: OrgContext, request: FastifyRequest): Promise<OrgPrincipal> {
  const resource = mcpResource(ctx.config);
  const metadataUrl = resourceMetadataUrl(ctx.config);
  if (!presentsBearerCredentials(request.headers.authorization)) throw new BearerRefusal(authenticationRequired(metadataUrl));
  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const verified = await verifyAccessToken(ctx, token, resource);
      if (!verified) throw new OAuthError(OAuthErrorCode.InvalidToken, 'the access token is invalid, expired or revoked');
      return {
        token,
        clientId: verified.clientId,
        scopes: verified.scopes,
        expiresAt: Math.floor(Date.parse(verified.expiresAt) / 1000),
        resource: new URL(resource),
        extra: { personId: verified.personId, grantId: verified.grantId },
      };
    },
  };
  try {
    const info = await verifyBearerToken(request.headers.authorization, {
      verifier,
      expectedResource: new URL(resource),
      resourceMetadataUrl: metadataUrl,
    });
    const extra = info.extra as { personId: string; grantId: string };
    return { personId: extra.personId, grantId: extra.grantId, clientId: info.clientId, scopes: info.scopes };
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    throw new BearerRefusal(bearerAuthChallengeResponse(error, { resourceMetadataUrl: metadataUrl }));
  }
}

/** RFC 6750 §2.1: the `Bearer` scheme, case-insensitive (RFC 9110 §11.1). */
function presentsBearerCredentials(authorization: string | undefined): boolean {
  return authorization !== undefined && /^bearer(?:\s|$)/i.test(authorization.trimStart());
}

/** RFC 6750 §3.1 and RFC 9728 §5.1: no error information, only where to discover the authorization server. */
function authenticationRequired(metadataUrl: string): Response {
  return new Response(null, { status: 401, headers: { 'WWW-Authenticate': `Bearer resource_metadata="${metadataUrl}"` } });
}
