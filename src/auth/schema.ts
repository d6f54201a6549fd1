/**
 * The authorization server's tables (DESIGN 4.7). Everything the protocol must remember lives here, so any
 * process can serve any step of a flow (DESIGN section 6): clients, pending authorization requests, grants,
 * codes, tokens and the JWKS signing keys. Codes and tokens are stored only as SHA-256 hashes.
 *
 * `person_id` refers to the org service's `people` table but carries no foreign key: the two folders are
 * owned and migrated independently, and a grant outliving its person is harmless (nobody can present it).
 */
import type { JWK } from 'jose';
import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'string' });
const createdAt = () => ts('created_at').notNull().defaultNow();
const scopeList = (name: string) => text(name).array().notNull().default(sql`'{}'::text[]`);

/**
 * Registered clients (RFC 7591) and cached client ID metadata documents. For a metadata document the id is
 * its URL and `cached_until` says when it must be fetched again.
 */
export const oauthClients = pgTable(
  'oauth_clients',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: ['registered', 'metadata_document'] }).notNull(),
    name: text('name'),
    redirectUris: text('redirect_uris').array().notNull(),
    grantTypes: text('grant_types').array().notNull(),
    responseTypes: text('response_types').array().notNull(),
    /** The `scope` a client registered with, kept as sent (RFC 7591 §2); requests are checked against the nine. */
    scope: text('scope'),
    createdAt: createdAt(),
    cachedUntil: ts('cached_until'),
  },
  (table) => [check('oauth_clients_kind_check', sql`${table.kind} IN ('registered', 'metadata_document')`)],
);

/** A validated authorization request waiting for the person's consent (about ten minutes). */
export const oauthAuthorizationRequests = pgTable('oauth_authorization_requests', {
  id: text('id').primaryKey(),
  clientId: text('client_id').notNull(),
  redirectUri: text('redirect_uri').notNull(),
  state: text('state'),
  codeChallenge: text('code_challenge').notNull(),
  scopes: scopeList('scopes'),
  resource: text('resource').notNull(),
  createdAt: createdAt(),
  expiresAt: ts('expires_at').notNull(),
  /** Set once the person allowed or denied; a request is answered only once. */
  answeredAt: ts('answered_at'),
});

/**
 * What one person allowed one client at one consent. Every code and token belongs to a grant, so revoking
 * the grant (code replay, refresh reuse, disconnect) revokes all of them at once.
 */
export const oauthGrants = pgTable(
  'oauth_grants',
  {
    id: text('id').primaryKey(),
    personId: text('person_id').notNull(),
    clientId: text('client_id').notNull(),
    scopes: scopeList('scopes'),
    resource: text('resource').notNull(),
    createdAt: createdAt(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (table) => [index('oauth_grants_person_client_idx').on(table.personId, table.clientId)],
);

export const oauthCodes = pgTable(
  'oauth_codes',
  {
    /** SHA-256 of the code, base64url. */
    hash: text('hash').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => oauthGrants.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    codeChallenge: text('code_challenge').notNull(),
    scopes: scopeList('scopes'),
    resource: text('resource').notNull(),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    /** Set by the one redemption that wins; a second presentation is a replay. */
    usedAt: ts('used_at'),
  },
  (table) => [index('oauth_codes_grant_idx').on(table.grantId)],
);

export const oauthTokens = pgTable(
  'oauth_tokens',
  {
    /** SHA-256 of the token, base64url. */
    hash: text('hash').primaryKey(),
    kind: text('kind', { enum: ['access', 'refresh'] }).notNull(),
    grantId: text('grant_id')
      .notNull()
      .references(() => oauthGrants.id, { onDelete: 'cascade' }),
    clientId: text('client_id').notNull(),
    personId: text('person_id').notNull(),
    scopes: scopeList('scopes'),
    resource: text('resource').notNull(),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    /** A refresh token is used exactly once: rotation sets this; presenting it again is reuse. */
    usedAt: ts('used_at'),
    revokedAt: ts('revoked_at'),
  },
  (table) => [
    index('oauth_tokens_grant_idx').on(table.grantId),
    check('oauth_tokens_kind_check', sql`${table.kind} IN ('access', 'refresh')`),
  ],
);

/**
 * JWKS signing keys. `generation` is unique, so processes starting together agree on one current key;
 * the JWKS publishes the newest two generations (current and previous).
 */
export const oauthSigningKeys = pgTable('oauth_signing_keys', {
  kid: text('kid').primaryKey(),
  generation: integer('generation').notNull().unique(),
  alg: text('alg').notNull(),
  publicJwk: jsonb('public_jwk').$type<JWK>().notNull(),
  privateJwk: jsonb('private_jwk').$type<JWK>().notNull(),
  createdAt: createdAt(),
});
