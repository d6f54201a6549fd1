/**
 * The HTTP server factory both services use: Fastify with zod schemas as the single source of request
 * validation (and of the OpenAPI document), one structured log line per request (at debug level), and one error mapper
 * that turns anything thrown into the catalogued JSON error shape.
 */
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import {
  hasZodFastifySchemaValidationErrors,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isDatabaseUnreachable, RETRY_AFTER_SECONDS } from './database-outage.js';
import { earlyAnswerServerFactory, onAnsweredEarly } from './early-answers.js';
import { isAppError, platformErrors, type AppError } from './errors.js';
import { loggerOptions, type LogFormat } from './logger.js';

export type HttpServer = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

export interface HttpServerOptions {
  service: string;
  logLevel: string;
  logFormat?: LogFormat;
  /** Largest request body accepted, in bytes; default 1 MiB. */
  bodyLimit?: number;
  /** TRUST_PROXY as configured: `true`, or a comma-separated list of the proxies' addresses/CIDRs. */
  trustProxy?: string;
  /**
   * The answer to a request no route serves, where the service has a better one than the catalogued JSON error (a
   * page for a person's browser); returning nothing keeps the JSON error.
   */
  notFoundPage?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined;
}

export function createHttpServer(options: HttpServerOptions): HttpServer {
  const early = earlyAnswerServerFactory();
  const app = Fastify({
    serverFactory: early.serverFactory,
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
  early.attach(app);

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // One line per request at debug level: a person reading the log at `info` sees the service, not the traffic.
  // The level is set once, at start, so at `info` the hook is not registered at all (a hook costs every request).
  if (options.logLevel === 'debug' || options.logLevel === 'trace') {
    app.addHook('onResponse', async (request, reply) => {
      request.log.debug(
        { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
        'request',
      );
    });
    onAnsweredEarly(app, ({ method, url, status, milliseconds }) =>
      app.log.debug({ method, url, status, ms: Math.round(milliseconds * 10) / 10 }, 'request'),
    );
  }

  app.addHook('preValidation', async (request) => {
    const schema = request.routeOptions.schema?.querystring;
    if (schema instanceof z.ZodObject) request.query = numbersFromQueryString(request.query as Record<string, unknown>, schema);
  });

  // After validation (and after multipart forms are read), before any handler touches the database.
  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.schema && [request.params, request.query, request.body].some(containsNul)) {
      throw platformErrors.invalidRequest('text may not contain NUL characters (U+0000)');
    }
  });

  app.setErrorHandler((error, request, reply) => sendError(toAppError(error, request), reply));
  app.setNotFoundHandler(
    (request, reply) => options.notFoundPage?.(request, reply) ?? sendError(platformErrors.noRoute(request.method, request.url.split('?')[0]), reply),
  );
  return app;
}

export interface Listening {
  /** Starts listening; resolves with the bound URL. */
  listen(): Promise<string>;
  /** Stops accepting connections, finishes in-flight requests and runs the `onClose` hooks. */
  close(): Promise<void>;
}

/**
 * `listen()` at the configured address with a one-line start banner, and `close()`. The banner leads with the
 * public origin, the one to give people and clients (a loopback address would fail the host checks and OAuth's
 * resource), and adds the address bound in parentheses.
 */
export function listening(
  app: HttpServer,
  service: string,
  config: { host: string; port: number; publicUrl: string },
  /** What the banner says after the origin (endpoints, where to go first, where generated secrets are kept). */
  notes: (origin: string) => readonly string[] = () => [],
): Listening {
  return {
    // One banner line per start, in place of Fastify's own "Server listening" line.
    listen: () =>
      app.listen({
        host: config.host,
        port: config.port,
        listenTextResolver: (address) => {
          const origin = publicOrigin(config.publicUrl, address);
          return [`${service} service at ${origin} (listening on ${address.replace(/^https?:\/\//, '')})`, ...notes(origin)].join(' · ');
        },
      }),
    close: () => app.close(),
  };
}

/** The public URL; on port 0 (the system picks one, as tests do) with the port picked. */
function publicOrigin(publicUrl: string, address: string): string {
  const url = new URL(publicUrl);
  if (url.port !== '0') return publicUrl;
  url.port = new URL(address).port;
  return url.href.replace(/\/$/, '');
}

/**
 * A query string carries text only, while the schemas say what a value is (a `limit` is a JSON number, as MCP
 * arguments give it). So a text the field refuses as it is, but accepts as the number it spells, is passed on
 * as that number; everything else is left for the schema to judge.
 */
function numbersFromQueryString(query: Record<string, unknown>, schema: z.ZodObject): Record<string, unknown> {
  const converted = { ...query };
  for (const [name, value] of Object.entries(query)) {
    const field = schema.shape[name];
    if (typeof value !== 'string' || value.trim() === '' || !field || field.safeParse(value).success) continue;
    if (field.safeParse(Number(value)).success) converted[name] = Number(value);
  }
  return converted;
}

/**
 * PostgreSQL text cannot hold U+0000, so a NUL anywhere in a validated request would otherwise surface as a
 * database error (500). Walks plain objects, arrays and strings only.
 */
function containsNul(value: unknown): boolean {
  // Iterative: a body may nest far deeper than a recursive walk's stack (issue 16).
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return true;
    } else if (Array.isArray(item)) {
      for (const member of item) pending.push(member);
    } else if (item !== null && typeof item === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(item))) {
      for (const [key, member] of Object.entries(item)) {
        if (key.includes('\u0000')) return true;
        pending.push(member);
      }
    }
  }
  return false;
}

export function sendError(error: AppError, reply: FastifyReply): FastifyReply {
  if (error.status === 401 && !reply.hasHeader('www-authenticate')) reply.header('www-authenticate', 'Bearer');
  if (error.status === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', String(RETRY_AFTER_SECONDS));
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
    return platformErrors.invalidRequest(`invalid request: ${summary}`, { issues });
  }
  const status = (error as FastifyError)?.statusCode;
  if (status === 413) return platformErrors.payloadTooLarge();
  if (status === 415) return platformErrors.unsupportedMediaType((error as Error).message);
  if (status === 429) return platformErrors.rateLimited();
  if (status && status >= 400 && status < 500) return platformErrors.invalidRequest((error as Error).message);
  if (isDatabaseUnreachable(error)) {
    request.log.warn({ err: error }, 'the database cannot be reached: 503');
    return platformErrors.unavailable();
  }
  request.log.error({ err: error }, 'unhandled error');
  return platformErrors.internal();
}

function parseTrustProxy(value: string | undefined): boolean | string[] {
  if (!value || value === 'false') return false;
  if (value === 'true') return true;
  return value.split(',').map((entry) => entry.trim()).filter(Boolean);
}

