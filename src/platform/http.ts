/**
 * The HTTP server factory both services use: Fastify with zod schemas as the single source of request
 * validation (and of the OpenAPI document), one structured log line per request (at debug level), and one error mapper
 * that turns anything thrown into the catalogued JSON error shape.
 */
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import {
  hasZodFastifySchemaValidationErrors,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { AppError, isAppError } from './errors.js';
import { loggerOptions, type LogFormat } from './logger.js';

export type HttpServer = FastifyInstance<any, any, any, any, ZodTypeProvider>;

export interface HttpServerOptions {
  service: string;
  logLevel: string;
  logFormat?: LogFormat;
  /** Largest request body accepted, in bytes; default 1 MiB. */
  bodyLimit?: number;
  /** TRUST_PROXY as configured: `true`, or a comma-separated list of the proxies' addresses/CIDRs. */
  trustProxy?: string;
}

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const app = Fastify({
    logger: loggerOptions(options.logLevel, options.service, options.logFormat),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    trustProxy: parseTrustProxy(options.trustProxy),
    // Clients such as load balancers get a clean close on shutdown instead of a reset mid-request.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // Longer than any slug, key or identifier a route accepts, so the route's own schema explains a refusal.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    // Errors the router raises before any route runs (a malformed or overlong URL) keep the error shape too.
    frameworkErrors: (error, request, reply) => sendError(toAppError(error, request), reply),
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // One line per request at debug level: a person reading the log at `info` sees the service, not the traffic.
  app.addHook('onResponse', async (request, reply) => {
    request.log.debug(
      { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    );
  });

  // After validation (and after multipart forms are read), before any handler touches the database.
  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.schema && [request.params, request.query, request.body].some(containsNul)) {
      throw new AppError('invalid_request', 400, 'text may not contain NUL characters (U+0000)');
    }
  });

  app.setErrorHandler((error, request, reply) => sendError(toAppError(error, request), reply));
  app.setNotFoundHandler((request, reply) =>
    sendError(new AppError('not_found', 404, `no route for ${request.method} ${request.url.split('?')[0]}`), reply),
  );
  return app;
}

/**
 * PostgreSQL text cannot hold U+0000, so a NUL anywhere in a validated request would otherwise surface as a
 * database error (500). Walks plain objects, arrays and strings only.
 */
function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (value !== null && typeof value === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    return Object.entries(value).some(([key, item]) => key.includes('\u0000') || containsNul(item));
  }
  return false;
}

export function sendError(error: AppError, reply: FastifyReply): FastifyReply {
  if (error.status === 401 && !reply.hasHeader('www-authenticate')) reply.header('www-authenticate', 'Bearer');
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.toJSON());
}

/** Maps Fastify's own and zod's errors onto the shared codes; anything unexpected is logged and hidden. */
export function toAppError(error: unknown, request: FastifyRequest): AppError {
  if (isAppError(error)) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const issues = error.validation.map((issue) => ({
      field: [error.validationContext, issue.instancePath.replace(/^\//, '').replaceAll('/', '.')]
        .filter(Boolean)
        .join('.'),
      message: issue.message,
    }));
    const summary = issues.map((issue) => `${issue.field}: ${issue.message}`).join('; ');
    return new AppError('invalid_request', 400, `invalid request: ${summary}`, { issues });
  }
  const status = (error as FastifyError)?.statusCode;
  if (status === 413) return new AppError('payload_too_large', 413, 'request body is too large');
  if (status === 415) return new AppError('unsupported_media_type', 415, (error as Error).message);
  if (status === 429) return new AppError('rate_limited', 429, 'too many requests, slow down');
  if (status && status >= 400 && status < 500) return new AppError('invalid_request', 400, (error as Error).message);
  request.log.error({ err: error }, 'unhandled error');
  return new AppError('internal_error', 500, 'internal server error');
}

function parseTrustProxy(value: string | undefined): boolean | string[] {
  if (!value || value === 'false') return false;
  if (value === 'true') return true;
  return value.split(',').map((entry) => entry.trim()).filter(Boolean);
}

/**
 * Starts listening and logs the service's start banner, once per bound address: where it listens, then
 * `notes` (where to go first, where generated secrets are kept), on every start.
 */
export async function listenWithBanner(app: HttpServer, options: { host: string; port: number; service: string; notes: string[] }): Promise<string> {
  const banner = (address: string) => [`${options.service} service listening on ${address}`, ...options.notes].join(' · ');
  return app.listen({ host: options.host, port: options.port, listenTextResolver: banner });
}
