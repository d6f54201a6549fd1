/**
 * Bearer authentication of the org MCP endpoint (spec 4.2 rule 1, 5.1, 7.1; RFC 6750, RFC 8707, RFC 9728)
 * with the SDK's resource-server helpers over the authorization server's token check:
 *
 * - the token is read from the Authorization header only; `?access_token=` is never looked at (RFC 6750
 *   §2.3 is not supported), so such a request is simply unauthenticated;
 * - a missing, unknown, expired or revoked token, or one issued for another resource, answers 401 with
 *   `WWW-Authenticate: Bearer … resource_metadata="<protected resource metadata URL>"`, from which a
 *   client discovers the authorization server.
 */
import {
  bearerAuthChallengeResponse,
  OAuthError,
  OAuthErrorCode,
  verifyBearerToken,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import { mcpResource, resourceMetadataUrl } from '../../auth/resource.js';
import { verifyAccessToken } from '../../auth/tokens.js';
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
