/**
 * Client metadata (RFC 7591 §2) as this server accepts it, whether sent to the registration endpoint or
 * served as a client ID metadata document: the same limits apply to both (spec 2.1 and 8).
 */
import { z } from 'zod';
import { InvalidClientMetadata, InvalidRedirectUri } from './errors.js';
import { validateRedirectUri } from './redirect-uri.js';
import type { oauthClients } from './schema.js';

export type Client = typeof oauthClients.$inferSelect;

export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

/** The metadata this server keeps from a registration request or a metadata document. */
export interface ClientMetadata {
  name: string | null;
  redirectUris: string[];
  grantTypes: GrantType[];
  responseTypes: ['code'];
  scope: string | null;
}

/**
 * The fields we read; any other RFC 7591 metadata (client_uri, logo_uri, contacts, software_id …) is
 * accepted and ignored, as RFC 7591 §2 allows.
 */
const metadataSchema = z.looseObject({
  redirect_uris: z.unknown().optional(),
  client_name: z.string().max(256, 'client_name is longer than 256 characters').optional(),
  grant_types: z.array(z.string()).optional(),
  response_types: z.array(z.string()).optional(),
  token_endpoint_auth_method: z.string().optional(),
  scope: z.string().max(1024, 'scope is longer than 1024 characters').optional(),
});

const redirectUrisSchema = z.array(z.string()).min(1).max(10);

/** Validates client metadata as sent to the registration endpoint or served as a metadata document. */
export function parseClientMetadata(input: unknown): ClientMetadata {
  const parsed = metadataSchema.safeParse(input);
  if (!parsed.success) throw new InvalidClientMetadata(describeIssues(parsed.error));
  const metadata = parsed.data;

  // Spec 2.1 and 8: redirect_uris is required, 1 to 10 entries.
  const redirectUris = redirectUrisSchema.safeParse(metadata.redirect_uris);
  if (!redirectUris.success) throw new InvalidRedirectUri('redirect_uris must be an array of 1 to 10 strings');

  // Spec 4.1 and OAuth 2.1 §2.3.1: each one must be a URI we would ever redirect a person to.
  redirectUris.data.forEach(validateRedirectUri);

  // Spec 2.1: authorization_code and refresh_token only. RFC 7591 §2 defaults to authorization_code; we
  // default to both, the record spec 2.1 shows.
  const grantTypes = metadata.grant_types ?? [...GRANT_TYPES];
  const unsupported = grantTypes.filter((type) => !(GRANT_TYPES as readonly string[]).includes(type));
  if (unsupported.length > 0) throw new InvalidClientMetadata(`unsupported grant_types: ${unsupported.join(', ')}`);
  if (!grantTypes.includes('authorization_code')) throw new InvalidClientMetadata('grant_types must include authorization_code');

  // Spec 2.1: the code flow is the only flow (response_types [code]).
  const responseTypes = metadata.response_types ?? ['code'];
  if (responseTypes.length !== 1 || responseTypes[0] !== 'code') throw new InvalidClientMetadata('response_types must be [code]');

  // Spec 5.1: public clients only. RFC 7591 §3.2.1 lets the server replace a requested method, so a client
  // asking for a secret gets `none` back in the record instead of a refusal.
  return {
    name: metadata.client_name ?? null,
    redirectUris: [...new Set(redirectUris.data)],
    grantTypes: GRANT_TYPES.filter((type) => grantTypes.includes(type)),
    responseTypes: ['code'],
    scope: metadata.scope ?? null,
  };
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message)).join('; ');
}

