/**
 * The common mistakes of a first start, each turned into one line that names what to change. Anything not
 * recognised here is a bug, and keeps its stack trace.
 */
import type { Config, DatabaseConfig } from '../config.js';
import { ConfigError } from '../config.js';
import { OrgFileError } from '../org/org-file/schema.js';
import { DatabaseInUseError } from '../platform/database-lock.js';

export type ServiceName = 'org' | 'content';

/** Thrown by the CLI for a mistake on its command line; printed as it is. */
export class UsageError extends Error {}

interface ErrnoLike {
  code?: string;
  syscall?: string;
  path?: string;
  hostname?: string;
  message?: string;
}

/** Where a start failed: the service, and whether it was opening its database or binding its port. */
export interface FailureContext {
  config?: Config;
  service?: ServiceName;
  phase?: 'database' | 'listen';
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);
/** PostgreSQL SQLSTATEs a misconfigured URL produces: bad password, unknown role, unknown database. */
const CONNECTION_SQLSTATES: Record<string, string> = { '28P01': 'password refused', '28000': 'role refused', '3D000': 'no such database' };

export function describeFailure(error: unknown, context: FailureContext = {}): string | undefined {
  if (error instanceof ConfigError || error instanceof OrgFileError || error instanceof UsageError || error instanceof DatabaseInUseError) {
    return error.message;
  }
  const failure = (error ?? {}) as ErrnoLike;
  if (failure.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    return `unknown option ${failure.message?.match(/'([^']+)'/)?.[1] ?? ''} (see atrium help)`.replace('option  ', 'option ');
  }
  if (typeof failure.code === 'string' && failure.code.startsWith('ERR_PARSE_ARGS_')) return `${failure.message} (see atrium help)`;
  const { config, service, phase } = context;
  if (failure.code === 'ENOENT' && failure.syscall === 'open' && failure.path) {
    const named = config?.org.orgFile && failure.path.endsWith(config.org.orgFile.replace(/^\.\//, '')) ? ' (ATRIUM_ORG_FILE)' : '';
    return `the file ${failure.path}${named} does not exist`;
  }
  if (phase === 'listen' && service && config) {
    const { host, port } = config[service];
    const variable = `${service.toUpperCase()}_PORT`;
    if (failure.code === 'EADDRINUSE') return `${service} service: port ${port} is already in use on ${host}; set ${variable} to a free port (or stop what uses it)`;
    if (failure.code === 'EACCES') return `${service} service: no permission to listen on port ${port}; set ${variable} to a port above 1023`;
    if (failure.code === 'EADDRNOTAVAIL') return `HOST ${host} is not an address of this machine; set HOST to one of its addresses (default 127.0.0.1)`;
    if (failure.code === 'ENOTFOUND' || failure.code === 'EAI_AGAIN') return `HOST ${host} does not resolve to an address; set HOST to an address of this machine (default 127.0.0.1)`;
  }
  if (phase === 'database' && service && config) {
    const database = config[service].database;
    const reason = CONNECTION_SQLSTATES[failure.code ?? ''] ?? (CONNECTION_CODES.has(failure.code ?? '') ? failure.message || failure.code : undefined);
    if (database.url && reason) return `${service} service: the database at ${describeDatabase(database)} does not answer (${reason})`;
  }
  return undefined;
}

/** The variable and the URL without its password. */
function describeDatabase(database: DatabaseConfig): string {
  const shown = new URL(database.url!);
  if (shown.password) shown.password = '***';
  return `${database.urlVariable ?? 'DATABASE_URL'}=${shown.href}`;
}
