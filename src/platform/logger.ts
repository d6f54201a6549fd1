import type { FastifyServerOptions } from 'fastify';

/**
 * Structured request logs: one JSON line per request with method, url, status and duration
 * (Fastify's pino logger). Authorization headers and cookies never reach the log.
 */
export function loggerOptions(level: string, service: string): FastifyServerOptions['logger'] {
  return {
    level,
    base: { service },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], remove: true },
  };
}
