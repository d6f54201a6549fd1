import type { FastifyServerOptions } from 'fastify';
import pretty from 'pino-pretty';

export type LogFormat = 'pretty' | 'json';

/**
 * Fastify's pino logger: JSON lines for log collectors, or (LOG_FORMAT=pretty, the default on a terminal)
 * coloured one-line messages for a person, formatted in-process so no worker thread is started.
 * Authorization headers and cookies never reach the log.
 */
export function loggerOptions(level: string, service: string, format: LogFormat = 'json'): FastifyServerOptions['logger'] {
  return {
    level,
    base: { service },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], remove: true },
    ...(format === 'pretty' && {
      stream: pretty({ translateTime: 'HH:MM:ss', ignore: 'pid,hostname,service', messageFormat: '{service} · {msg}', sync: true }),
    }),
  };
}
