/**
 * OAuth clients: dynamic registration (RFC 7591, spec 2.1) and lookup of a `client_id`, which is either an
 * id we issued or the URL of a client ID metadata document (cimd.ts). Every client is public: no secret is
 * ever issued and `token_endpoint_auth_method` is always `none` (spec 5.1).
 */
import { eq } from 'drizzle-orm';
import type { AuthContext } from './context.js';
import type { Queryable } from '../platform/database.js';
import { isMetadataDocumentClientId, loadMetadataDocumentClient } from './cimd.js';
import { parseClientMetadata, type Client } from './client-metadata.js';
import { InvalidClient } from './errors.js';
import { PREFIX, randomToken } from './ids.js';
import { checkRegistrationRate } from './registration-limit.js';
import { oauthClients } from './schema.js';

export interface RegistrationSource {
  /**
   * The network address the registration came from; registrations are limited per address
   * (registration-limit.ts). Absent for in-process callers such as benchmarks.
   */
  address?: string;
}

/** POST /oauth/register (RFC 7591 §3.1). Only well-formed registrations count towards the address's limit. */
export async function registerClient(ctx: AuthContext, input: unknown, source: RegistrationSource = {}): Promise<Client> {
  const metadata = parseClientMetadata(input);
  if (source.address !== undefined) await checkRegistrationRate(ctx, source.address);
  const [client] = await ctx.db
    .insert(oauthClients)
    .values({ id: randomToken(PREFIX.client), kind: 'registered', ...metadata })
    .returning();
  return client;
}

/** RFC 7591 §3.2.1 and spec 2.1: the registration record. */
export function registrationRecord(client: Client) {
  return {
    client_id: client.id,
    ...(client.name !== null ? { client_name: client.name } : {}),
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: client.responseTypes,
    token_endpoint_auth_method: 'none' as const,
    client_id_issued_at: Math.floor(Date.parse(client.createdAt) / 1000),
    ...(client.scope !== null ? { scope: client.scope } : {}),
  };
}

/**
 * The client behind a `client_id`, or InvalidClient. `address`, the requester's, limits the metadata
 * documents it can make the server fetch (cimd.ts).
 */
export async function findClient(ctx: AuthContext, clientId: string, address?: string): Promise<Client> {
  if (isMetadataDocumentClientId(clientId)) return loadMetadataDocumentClient(ctx, clientId, address);
  const client = await selectClient(ctx.db, clientId);
  if (!client || client.kind !== 'registered') throw new InvalidClient('unknown client_id');
  return client;
}

export async function selectClient(db: Queryable, clientId: string): Promise<Client | undefined> {
  const [client] = await db.select().from(oauthClients).where(eq(oauthClients.id, clientId));
  return client;
}

const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/**
 * The name a client registered, as pages and records show it: a client chooses its own name, so the bidirectional
 * controls (Unicode TR #9 §2: embeddings, overrides, isolates and the implicit marks) are removed — they could make
 * "Evil‮ppA" read as another app's name. Null when it gave none (or nothing but controls).
 */
export function shownClientName(name: string | null): string | null {
  return name?.replace(BIDI_CONTROLS, '').trim() || null;
}

/** A display name for consent and connections: the registered name (`shownClientName`), else the document URL's host. */
export function clientDisplayName(client: Pick<Client, 'id' | 'kind' | 'name'>): string {
  const name = shownClientName(client.name);
  if (name) return name;
  return client.kind === 'metadata_document' ? new URL(client.id).host : client.id.replace(BIDI_CONTROLS, '');
}

/** The display name of a stored client, for the audit of what a person did about it; its id if the row is gone. */
export async function storedClientName(db: Queryable, clientId: string): Promise<string> {
  const client = await selectClient(db, clientId);
  return client ? clientDisplayName(client) : clientId;
}
