/**
 * Every environment variable Atrium reads, parsed and validated in one place (DESIGN section 1).
 * Services receive a `Config` object; nothing else reads `process.env`.
 */
import path from 'node:path';
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
/** WHATWG parsing takes `localhost:8080` for a URL with the scheme `localhost:`, so the scheme is checked. */
const url = z
  .string()
  .url()
  .refine((value) => /^https?:\/\//i.test(value), 'must start with http:// or https:// (for example http://localhost:8080)');
const databaseUrl = z
  .string()
  .refine((value) => /^postgres(ql)?:\/\/\S+$/i.test(value), 'must be a PostgreSQL URL such as postgres://user@host:5432/database');
/** Every password set from the environment (the owner's, and each `password_env` of the organization file). */
export const passwordRule = z.string().min(8, 'must be at least 8 characters');
const flag = z.enum(['0', '1', 'true', 'false']).transform((value) => value === '1' || value === 'true');
const optionalText = z.string().min(1).optional();
/** `smtp://` (STARTTLS when the server offers it) or `smtps://` (TLS from the start), with an optional `user:pass@`. */
const smtpUrl = z
  .string()
  .url()
  .refine((value) => /^smtps?:\/\/[^/?#]*[^@/?#]/i.test(value), 'must be an smtp:// or smtps:// URL with a host, such as smtps://user:pass@mail.example.com:465');
/** A bare address or `Name <address>`, as a From header holds it. */
const mailFrom = z
  .string()
  .refine((value) => z.email().safeParse(/^[^<>]*<([^<>]+)>$/.exec(value)?.[1] ?? value).success, 'must be an address such as atrium@example.com or "Atrium <atrium@example.com>"');

const envSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  ORG_PORT: port.default(8080),
  ORG_PUBLIC_URL: url.optional(),
  AUTH_PUBLIC_URL: url.optional(),
  CONTENT_PORT: port.default(8081),
  CONTENT_PUBLIC_URL: url.optional(),
  ATRIUM_DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: databaseUrl.optional(),
  ORG_DATABASE_URL: databaseUrl.optional(),
  CONTENT_DATABASE_URL: databaseUrl.optional(),
  CONTENT_API_SECRET: z.string().min(16, 'CONTENT_API_SECRET must be at least 16 characters').optional(),
  ATRIUM_ADMIN_EMAIL: z.string().email().optional(),
  ATRIUM_ADMIN_PASSWORD: passwordRule.optional(),
  ATRIUM_ORG_FILE: optionalText,
  /** Development only: lets client ID metadata documents be fetched from loopback addresses. */
  ATRIUM_CIMD_ALLOW_LOOPBACK: z.enum(['0', '1', 'true', 'false']).optional(),
  /** Dynamic client registrations allowed per client address and hour (src/auth/registration-limit.ts). */
  ORG_REGISTRATIONS_PER_HOUR: z.coerce.number().int().min(1).optional(),
  /** Seconds a rotated refresh token may be presented again for a fresh pair (DESIGN 4.7); 0 turns it off. */
  OAUTH_REFRESH_REUSE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /** Roadmap votes (cast or withdrawn) per client address and minute (src/content/vote-limit.ts). */
  CONTENT_VOTES_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  REVALIDATE_URL: url.optional(),
  REVALIDATE_SECRET: optionalText,
  LLM_BASE_URL: url.optional(),
  LLM_API_KEY: optionalText,
  LLM_MODEL: optionalText,
  /** How long the assistant waits for the model before answering extractively instead. */
  LLM_TIMEOUT_SECONDS: z.coerce.number().positive().max(60).default(10),
  /** How long an agent's webhook delivery is retried before its operation fails `undeliverable` (DESIGN 4.5). */
  AGENT_DELIVERY_WINDOW_SECONDS: z.coerce.number().int().min(1).default(600),
  /** How long one delivery attempt waits for the agent's answer. */
  AGENT_DELIVERY_TIMEOUT_SECONDS: z.coerce.number().int().min(1).default(10),
  /** How long an organization event is retried to an endpoint before its delivery fails for good (DESIGN 4.8). */
  EVENT_DELIVERY_WINDOW_SECONDS: z.coerce.number().int().min(1).default(86_400),
  /**
   * Reverse proxies whose X-Forwarded-For is believed (Fastify's `trustProxy`): `true`, or a comma-separated
   * list of their addresses/CIDRs. Unset: the socket address is the client, so per-client rate limits stay
   * honest when nothing sits in front, and cannot be dodged with a forged header.
   */
  TRUST_PROXY: optionalText,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `pretty` for people (the default when standard output is a terminal), `json` for log collectors. */
  LOG_FORMAT: z.enum(['pretty', 'json']).optional(),
  /** PostgreSQL: how long to wait for a connection before the request answers 503 `unavailable`. */
  DATABASE_CONNECT_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(5),
  /** PostgreSQL: the longest one statement may run (server-side, and on the client should the server hang). */
  DATABASE_STATEMENT_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(20),
  /** PostgreSQL: how long a transaction may sit idle before the server ends it, releasing its locks. */
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS: z.coerce.number().positive().max(3600).default(30),
  /** Serves `GET /metrics` (Prometheus text format) on both services; off by default. */
  METRICS_ENABLED: flag.default(false),
  /** Email to people (DESIGN 4.8): the SMTP server; unset, no email is sent. */
  SMTP_URL: smtpUrl.optional(),
  /** The From of every email; required with SMTP_URL. */
  MAIL_FROM: mailFrom.optional(),
  /** How long connecting to the SMTP server, its greeting and each step of a send may take. */
  SMTP_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(120).default(10),
});

/** The rules that tie one variable to another (`ENV_VARIABLES` still lists the shape's). */
const envRules = envSchema.refine((e) => !e.SMTP_URL || e.MAIL_FROM, { message: 'is required when SMTP_URL is set', path: ['MAIL_FROM'] });

/** The environment variables `loadConfig` reads, for `atrium help`. */
export const ENV_VARIABLES = Object.keys(envSchema.shape);

/** Where a service keeps its data: the embedded database under the data dir, or a PostgreSQL schema. */
export interface DatabaseConfig {
  /** PostgreSQL connection string; absent means the embedded PGlite database in `dataDir`. */
  url?: string;
  /** Directory of the embedded database (ignored when `url` is set). `memory://` keeps it in memory. */
  dataDir: string;
  /**
   * In memory only: a data directory PGlite dumped (`dumpDataDir`) to start from instead of a new one, its
   * pending migrations applied as on any open. The tests start each database from one migrated copy, which
   * spares each the embedded initdb (about 1.5 s).
   */
  startFrom?: Blob;
  /** PostgreSQL schema holding this service's tables. */
  schema: string;
  /** The environment variable `url` came from, named in messages when the database does not answer. */
  urlVariable?: string;
  /** PostgreSQL only; defaults 5, 20 and 30 seconds (the DATABASE_*_TIMEOUT_SECONDS variables). */
  timeouts?: DatabaseTimeouts;
}

export interface DatabaseTimeouts {
  connectSeconds: number;
  statementSeconds: number;
  idleInTransactionSeconds: number;
}


export interface ContentConfig {
  host: string;
  port: number;
  publicUrl: string;
  database: DatabaseConfig;
  /** Bearer secret for protected REST routes and the content MCP endpoint; generated when unset. */
  apiSecret?: string;
  dataDir: string;
  assetDir: string;
  revalidate: { url?: string; secret?: string };
  /** Roadmap votes per client address and minute; default 30 (src/content/vote-limit.ts). */
  votesPerMinute?: number;
  trustProxy?: string;
  logLevel: string;
  /** `json` unless set (tests build configs by hand). */
  logFormat?: 'pretty' | 'json';
  /** Serves `GET /metrics`; off unless set. */
  metrics?: boolean;
}

export interface OrgConfig {
  host: string;
  port: number;
  publicUrl: string;
  authPublicUrl: string;
  database: DatabaseConfig;
  dataDir: string;
  admin: { email?: string; password?: string };
  orgFile?: string;
  cimdAllowLoopback: boolean;
  /** Client registrations per address and hour; default 20 (src/auth/registration-limit.ts). */
  registrationsPerHour?: number;
  /** Refresh token reuse interval in seconds; default 30, 0 turns it off (src/auth/token.ts). */
  refreshReuseSeconds?: number;
  /**
   * URL and secret of the content service (content connectors); `beside` when it runs in the same process,
   * so the first start without an organization file wires `publish_blog_post` to it (DESIGN 4.2).
   */
  content?: { url: string; apiSecret?: string; beside?: boolean };
  /** The assistant's optional model (DESIGN 4.5); `timeoutMs` defaults to 10 s. */
  llm: { baseUrl?: string; apiKey?: string; model?: string; timeoutMs?: number };
  /**
   * Resolves a secret the organization file names by environment variable (`secret_env`, DESIGN 4.2);
   * absent, no such secret is available. Read per use, so a secret set after the file was applied counts.
   */
  resolveSecret?: SecretResolver;
  /** Webhook delivery to agents (delivery/deliveries.ts); defaults: 600-second retry window, 10-second attempts. */
  delivery?: { windowSeconds?: number; timeoutSeconds?: number };
  /** Email to people (notifications/mailer.ts); absent, no email is sent or queued. `timeoutSeconds` defaults to 10. */
  mail?: MailConfig;
  /** Event webhooks (events/webhooks.ts): how long a delivery is retried; default 24 hours. Attempts last as agents'. */
  events?: { windowSeconds?: number };
  trustProxy?: string;
  logLevel: string;
  /** `json` unless set (tests build configs by hand). */
  logFormat?: 'pretty' | 'json';
  /** Serves `GET /metrics`; off unless set. */
  metrics?: boolean;
}

export interface MailConfig {
  /** `smtp://` or `smtps://`, with optional credentials. */
  url: string;
  from: string;
  timeoutSeconds?: number;
}

/** The value of a named secret (`secret_env`), or undefined when it is not set. */
export type SecretResolver = (name: string) => string | undefined;

/** Secrets named by the organization file, read from `env` (by default this process's environment). */
export function secretResolver(env: NodeJS.ProcessEnv = process.env): SecretResolver {
  return (name) => env[name] || undefined;
}

export interface Config {
  content: ContentConfig;
  org: OrgConfig;
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, terminal = process.stdout.isTTY === true): Config {
  const parsed = envRules.safeParse(stripEmpty(env));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.ATRIUM_DATA_DIR);
  const orgPublicUrl = trimSlash(e.ORG_PUBLIC_URL ?? `http://localhost:${e.ORG_PORT}`);
  const contentPublicUrl = trimSlash(e.CONTENT_PUBLIC_URL ?? `http://localhost:${e.CONTENT_PORT}`);
  const observability = { logLevel: e.LOG_LEVEL, logFormat: e.LOG_FORMAT ?? (terminal ? 'pretty' : 'json'), metrics: e.METRICS_ENABLED } as const;
  const urlVariable = (own: 'CONTENT_DATABASE_URL' | 'ORG_DATABASE_URL') => (e[own] ? own : e.DATABASE_URL ? 'DATABASE_URL' : undefined);
  const timeouts: DatabaseTimeouts = {
    connectSeconds: e.DATABASE_CONNECT_TIMEOUT_SECONDS,
    statementSeconds: e.DATABASE_STATEMENT_TIMEOUT_SECONDS,
    idleInTransactionSeconds: e.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS,
  };

  const content: ContentConfig = {
    host: e.HOST,
    port: e.CONTENT_PORT,
    publicUrl: contentPublicUrl,
    database: {
      url: e.CONTENT_DATABASE_URL ?? e.DATABASE_URL,
      dataDir: path.join(dataDir, 'content'),
      schema: 'content',
      urlVariable: urlVariable('CONTENT_DATABASE_URL'),
      timeouts,
    },
    apiSecret: e.CONTENT_API_SECRET,
    dataDir,
    assetDir: path.join(dataDir, 'assets'),
    revalidate: { url: e.REVALIDATE_URL, secret: e.REVALIDATE_SECRET },
    votesPerMinute: e.CONTENT_VOTES_PER_MINUTE,
    trustProxy: e.TRUST_PROXY,
    ...observability,
  };
  const org: OrgConfig = {
    host: e.HOST,
    port: e.ORG_PORT,
    publicUrl: orgPublicUrl,
    authPublicUrl: trimSlash(e.AUTH_PUBLIC_URL ?? orgPublicUrl),
    database: {
      url: e.ORG_DATABASE_URL ?? e.DATABASE_URL,
      dataDir: path.join(dataDir, 'org'),
      schema: 'org',
      urlVariable: urlVariable('ORG_DATABASE_URL'),
      timeouts,
    },
    dataDir,
    admin: { email: e.ATRIUM_ADMIN_EMAIL, password: e.ATRIUM_ADMIN_PASSWORD },
    orgFile: e.ATRIUM_ORG_FILE,
    cimdAllowLoopback: e.ATRIUM_CIMD_ALLOW_LOOPBACK === '1' || e.ATRIUM_CIMD_ALLOW_LOOPBACK === 'true',
    registrationsPerHour: e.ORG_REGISTRATIONS_PER_HOUR,
    refreshReuseSeconds: e.OAUTH_REFRESH_REUSE_SECONDS,
    content: { url: contentPublicUrl, apiSecret: e.CONTENT_API_SECRET },
    llm: { baseUrl: e.LLM_BASE_URL, apiKey: e.LLM_API_KEY, model: e.LLM_MODEL, timeoutMs: e.LLM_TIMEOUT_SECONDS * 1000 },
    resolveSecret: secretResolver(env),
    delivery: { windowSeconds: e.AGENT_DELIVERY_WINDOW_SECONDS, timeoutSeconds: e.AGENT_DELIVERY_TIMEOUT_SECONDS },
    ...(e.SMTP_URL && e.MAIL_FROM ? { mail: { url: e.SMTP_URL, from: e.MAIL_FROM, timeoutSeconds: e.SMTP_TIMEOUT_SECONDS } } : {}),
    events: { windowSeconds: e.EVENT_DELIVERY_WINDOW_SECONDS },
    trustProxy: e.TRUST_PROXY,
    ...observability,
  };
  return { content, org };
}

/** An exported-but-empty variable (`FOO=`) means "unset", as most shells and .env files intend. */
function stripEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => !!entry[1]));
}

function trimSlash(value: string): string {
  return value.replace(/\/+$/, '');
}
