/**
 * PKCE (RFC 7636), S256 only (spec 5.1; OAuth 2.1 §4.1.1): the verifier never travels through the browser,
 * so a stolen code is useless without it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { InvalidGrant, InvalidRequest } from './errors.js';

/** RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is always 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Checks the authorization request's `code_challenge` and `code_challenge_method`. */
export function checkCodeChallenge(challenge: string | undefined, method: string | undefined): string {
  // OAuth 2.1 §4.1.1: PKCE is required for every client.
  if (!challenge) throw new InvalidRequest('code_challenge is required (PKCE with S256)');

  // Spec 5.1: S256 is the only method; `plain` (the RFC 7636 default when the method is absent) is refused.
  if (method !== 'S256') throw new InvalidRequest('code_challenge_method must be S256');

  // RFC 7636 §4.2: the challenge is the base64url SHA-256 of the verifier.
  if (!S256_CHALLENGE.test(challenge)) throw new InvalidRequest('code_challenge is not a base64url SHA-256 value');
  return challenge;
}

/** RFC 7636 §4.6: the token request's `code_verifier` must hash to the stored challenge. */
export function verifyPkce(verifier: string, challenge: string): void {
  if (!VERIFIER.test(verifier)) throw new InvalidGrant('code_verifier is malformed');
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  if (computed.length !== expected.length || !timingSafeEqual(computed, expected)) {
    throw new InvalidGrant('code_verifier does not match the code_challenge');
  }
}
