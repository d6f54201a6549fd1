/** How long each credential lives, in seconds (DESIGN 4.7; the spec leaves them "not shown", section 8). */
export const LIFETIME = {
  /** A validated authorization request waiting for consent. */
  authorizationRequest: 10 * 60,
  code: 60,
  accessToken: 60 * 60,
  refreshToken: 30 * 24 * 60 * 60,
} as const;

/**
 * Seconds after its rotation during which a refresh token presented again yields a fresh pair instead of
 * revoking the grant (DESIGN 4.7, `OAUTH_REFRESH_REUSE_SECONDS`).
 */
export const DEFAULT_REFRESH_REUSE_SECONDS = 30;
