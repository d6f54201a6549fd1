/**
 * The authorization server's HTTP surface (spec 4.1). Routes only parse, call the protocol modules and
 * write the answer; every refusal is an OAuthError, written by one error handler in the RFC 6749 §5.2
 * shape with `Cache-Control: no-store`.
 */
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnreachable, RETRY_AFTER_SECONDS } from '../platform/database-outage.js';
import type { AuthContext } from './context.js';
import type { HttpServer } from '../platform/http.js';
import { startAuthorization } from './authorization.js';
import { registerClient, registrationRecord } from './clients.js';
import { renderAuthorizationErrorPage } from './error-page.js';
import { InvalidClient, InvalidClientMetadata, InvalidRequest, isOAuthError, OAuthError, TooManyRequests } from './errors.js';
import { publishedKeys } from './jwks.js';
import { AUTH_PATHS, authorizationServerMetadata, protectedResourceMetadata } from './metadata.js';
import type { RawParams } from './params.js';
import { RESOURCE_METADATA_PATH } from './resource.js';
import { revokeToken } from './revocation.js';
import { exchangeToken } from './token.js';


const FORM = 'application/x-www-form-urlencoded';

export function registerAuthRoutes(app: HttpServer, ctx: AuthContext): void {
  app.register(async (scope) => {
    // Forms may already be parsed by a sibling plugin registered at the root (the org pages).
    if (!scope.hasContentTypeParser(FORM)) await scope.register(formbody);
    scope.setErrorHandler((error, request, reply) => sendOAuthError(toOAuthError(error, request), reply));

    // Browser-based MCP clients discover and call these across origins; none of them uses cookies.
    scope.addHook('onSend', async (request, reply) => {
      if (!request.url.startsWith(AUTH_PATHS.authorize)) reply.header('access-control-allow-origin', '*');
    });
    for (const path of [AUTH_PATHS.register, AUTH_PATHS.token, AUTH_PATHS.revoke]) {
      scope.options(path, async (_request, reply) =>
        reply
          .code(204)
          .header('access-control-allow-methods', 'POST')
          .header('access-control-allow-headers', 'content-type, mcp-protocol-version')
          .header('access-control-max-age', '86400')
          .send(),
      );
    }

    // RFC 8414 §3 and spec 2.5.
    scope.get(AUTH_PATHS.metadata, async (_request, reply) => reply.header('cache-control', 'max-age=300').send(authorizationServerMetadata(ctx.config)));

    // RFC 9728 §3 and spec 2.4, at the path the MCP endpoint's 401 challenge names.
    scope.get(RESOURCE_METADATA_PATH, async (_request, reply) =>
      reply.header('cache-control', 'max-age=300').send(protectedResourceMetadata(ctx.config)),
    );

    // RFC 7517.
    scope.get(AUTH_PATHS.jwks, async (_request, reply) => reply.header('cache-control', 'max-age=300').send(await publishedKeys(ctx.db)));

    // RFC 7591 §3: 201 with the registration record; limited per client address (registration-limit.ts).
    scope.post(AUTH_PATHS.register, async (request, reply) => {
      if (!isContentType(request, 'application/json')) throw new InvalidClientMetadata('send the client metadata as application/json');
      const client = await registerClient(ctx, request.body, { address: request.ip });
      return noStore(reply).code(201).send(registrationRecord(client));
    });

    // RFC 6749 §4.1.1: errors before the redirect URI is trusted are shown, never redirected.
    scope.get(AUTH_PATHS.authorize, async (request, reply) => {
      try {
        const { location } = await startAuthorization(ctx, request.query as RawParams, request.ip);
        return noStore(reply).redirect(location, 302);
      } catch (error) {
        if (!isOAuthError(error)) throw error;
        return sendAuthorizationErrorPage(error, request, reply);
      }
    });

    // RFC 6749 §3.2 and §5.1: form body in, JSON out, never cached.
    scope.post(AUTH_PATHS.token, async (request, reply) => {
      const params = formParams(request);
      return noStore(reply).send(await exchangeToken(ctx, params, request.ip));
    });

    // RFC 7009 §2.2: 200 with an empty body, also for unknown tokens.
    scope.post(AUTH_PATHS.revoke, async (request, reply) => {
      await revokeToken(ctx, formParams(request), request.ip);
      return noStore(reply).code(200).send();
    });
  });
}

/**
 * RFC 6749 §3.2: the token and revocation endpoints take form bodies. Public clients send client_id in
 * the body; a client sending an Authorization header believes it holds a secret, and we issue none.
 */
function formParams(request: FastifyRequest): RawParams {
  if (!isContentType(request, FORM)) throw new InvalidRequest(`the body must be ${FORM}`);
  if (request.headers.authorization) throw new InvalidClient('this server issues no client secrets: send client_id in the body (token_endpoint_auth_method none)');
  return request.body as RawParams;
}

function isContentType(request: FastifyRequest, type: string): boolean {
  return (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase() === type;
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

function sendOAuthError(error: OAuthError, reply: FastifyReply): FastifyReply {
  if (error instanceof TooManyRequests) reply.header('retry-after', String(error.retryAfter));
  if (error.status === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  return noStore(reply).code(error.status).type('application/json; charset=utf-8').send(error.toOAuthJSON());
}

/** Fastify's own refusals (malformed JSON, unknown media type, body too large) as OAuth errors. */
function toOAuthError(error: unknown, request: FastifyRequest): OAuthError {
  if (isOAuthError(error)) return error;
  const status = (error as FastifyError).statusCode;
  if (status === 413) return new OAuthError('invalid_request', 413, 'request body is too large');
  if (status && status >= 400 && status < 500) {
    return request.url.startsWith(AUTH_PATHS.register)
      ? new InvalidClientMetadata((error as Error).message)
      : new InvalidRequest((error as Error).message);
  }
  if (isDatabaseUnreachable(error)) {
    // RFC 6749 §4.1.2.1's temporarily_unavailable, with the Retry-After the rest of the platform sends (503).
    request.log.warn({ err: error }, 'the database cannot be reached: 503');
    return new OAuthError('temporarily_unavailable', 503, 'the database cannot be reached right now; try again shortly');
  }
  request.log.error({ err: error }, 'unhandled error in the authorization server');
  return new OAuthError('server_error', 500, 'internal server error');
}

/**
 * Spec 7.1 and RFC 6749 §4.1.2.1: the person sees what went wrong (an unknown client, a redirect URI that
 * does not match); a client asking for JSON gets the RFC 6749 §5.2 body. Always 400, never a redirect.
 */
function sendAuthorizationErrorPage(error: OAuthError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  noStore(reply).code(error.pageStatus);
  if (error instanceof TooManyRequests) reply.header('retry-after', String(error.retryAfter));
  const accept = request.headers.accept ?? '';
  if (accept.includes('application/json') && !accept.includes('text/html')) return reply.type('application/json; charset=utf-8').send(error.toOAuthJSON());
  return reply
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
    .header('x-frame-options', 'DENY')
    .type('text/html; charset=utf-8')
    .send(renderAuthorizationErrorPage(error));
}

