/**
 * The authorization server's error catalogue. Each protocol refusal is its own class carrying the RFC's
 * error code and HTTP status; endpoints throw them and one serializer writes the RFC 6749 §5.2 body
 * `{error, error_description}` (RFC 7591 §3.2.2 and RFC 7009 §2.2.1 use the same shape).
 *
 * They extend AppError so that one escaping into a non-OAuth route still answers with its status
 * instead of a 500.
 */
import { AppError } from '../platform/errors.js';

export interface OAuthErrorBody {
  error: string;
  error_description: string;
}

export class OAuthError extends AppError {
  /**
   * The status of the page the authorization endpoint shows the person instead of redirecting (RFC 6749
   * §4.1.2.1): 400 for every error, whatever `status` the token endpoint answers with.
   */
  readonly pageStatus: number = 400;

  constructor(error: string, status: number, description: string) {
    super(error, status, description);
    this.name = new.target.name;
  }

  /** RFC 6749 §5.2. */
  toOAuthJSON(): OAuthErrorBody {
    return { error: this.code, error_description: this.message };
  }
}

/** RFC 6749 §5.2: missing, repeated or malformed parameter. */
export class InvalidRequest extends OAuthError {
  constructor(description: string) {
    super('invalid_request', 400, description);
  }
}

/**
 * RFC 6749 §5.2: unknown client or a client that cannot be used; 401, as the RFC ties the error to client
 * authentication at the token endpoint. Where the person's browser meets it (the authorization endpoint),
 * it is shown with `pageStatus`, as every error there is.
 */
export class InvalidClient extends OAuthError {
  constructor(description: string) {
    super('invalid_client', 401, description);
  }
}

/** RFC 6749 §5.2: code or refresh token invalid, expired, revoked, used, or bound to something else. */
export class InvalidGrant extends OAuthError {
  constructor(description: string) {
    super('invalid_grant', 400, description);
  }
}

/** RFC 6749 §5.2 and §4.1.2.1: a scope outside the nine, or wider than the grant. */
export class InvalidScope extends OAuthError {
  constructor(description: string) {
    super('invalid_scope', 400, description);
  }
}

/** RFC 8707 §2: the `resource` is missing or is not this server's MCP resource. */
export class InvalidTarget extends OAuthError {
  constructor(description: string) {
    super('invalid_target', 400, description);
  }
}

/** RFC 6749 §5.2: a grant type other than authorization_code and refresh_token. */
export class UnsupportedGrantType extends OAuthError {
  constructor(description: string) {
    super('unsupported_grant_type', 400, description);
  }
}

/** RFC 6749 §4.1.2.1: a response type other than `code`. */
export class UnsupportedResponseType extends OAuthError {
  constructor(description: string) {
    super('unsupported_response_type', 400, description);
  }
}

/** RFC 6749 §4.1.2.1: the person (or the server on their behalf) refused. */
export class AccessDenied extends OAuthError {
  constructor(description: string) {
    super('access_denied', 400, description);
  }
}

/** RFC 7591 §3.2.2 and spec 7.1: a redirect URI that is malformed, not allowed, or not registered. */
export class InvalidRedirectUri extends OAuthError {
  constructor(description: string) {
    super('invalid_redirect_uri', 400, description);
  }
}

/** RFC 7591 §3.2.2: a registration (or metadata document) field outside what this server accepts. */
export class InvalidClientMetadata extends OAuthError {
  constructor(description: string) {
    super('invalid_client_metadata', 400, description);
  }
}

/**
 * Too many attempts from one client address (RFC 6585 §4: 429 with `Retry-After`). No OAuth RFC registers an
 * error code for this (RFC 7591 §3.2.2 lists none; `slow_down` of RFC 8628 §3.5 is for device polling), so the
 * code is named after the status: `too_many_requests`, in the usual `{error, error_description}` body.
 */
export class TooManyRequests extends OAuthError {
  constructor(
    description: string,
    /** Seconds until the client may try again; sent as `Retry-After`. */
    readonly retryAfter: number,
  ) {
    super('too_many_requests', 429, description);
  }

  /** A person's browser is told the same: wait, then try again. */
  override readonly pageStatus = 429;
}

export function isOAuthError(value: unknown): value is OAuthError {
  return value instanceof OAuthError;
}

/** RFC 6749 §5.2: the client did not register this grant type. */
export class UnauthorizedClient extends OAuthError {
  constructor(description: string) {
    super('unauthorized_client', 400, description);
  }
}
