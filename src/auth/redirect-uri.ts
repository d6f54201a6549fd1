/**
 * Redirect URIs: which ones a client may register (RFC 7591, OAuth 2.1 §2.3.1) and whether a requested one
 * matches a registered one (spec 4.1 redirect URI rules 1–4).
 *
 * A registered URI must be in its canonical WHATWG form, so that the string the client registered, the
 * string we compare, and the URL the browser finally visits are one and the same. That single rule refuses
 * backslashes, dot segments, upper-case schemes and hosts, `127.1`, default ports spelled out and
 * percent-encoded host names, each of which a parser elsewhere may read differently.
 */
import { InvalidRedirectUri } from './errors.js';

export const MAX_REDIRECT_URI_LENGTH = 2048;

/** Loopback hosts as the WHATWG parser spells them (RFC 8252 §7.3; spec 4.1 rule 2). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname);
}

/** Throws InvalidRedirectUri unless `uri` may be registered. */
export function validateRedirectUri(uri: string): void {
  // Spec section 8: each redirect URI is at most 2048 characters.
  if (uri.length > MAX_REDIRECT_URI_LENGTH) throw new InvalidRedirectUri(`redirect URI longer than ${MAX_REDIRECT_URI_LENGTH} characters`);

  // RFC 6749 §3.1.2: an absolute URI.
  if (!URL.canParse(uri)) throw new InvalidRedirectUri(`redirect URI is not an absolute URL: ${uri}`);
  const url = new URL(uri);

  // OAuth 2.1 §2.3.1 and RFC 8252: web and loopback clients only; javascript:, data:, file: and private
  // schemes could run code or reach local files in the person's browser.
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new InvalidRedirectUri(`redirect URI scheme ${url.protocol} is not allowed`);

  // Spec 4.1 rule 4 and RFC 6749 §3.1.2: no fragment.
  if (uri.includes('#')) throw new InvalidRedirectUri('redirect URI must not contain a fragment');

  // RFC 9700 §4.1.1: credentials in the authority (`user@host`) make a URI read differently by different parsers.
  if (url.username || url.password) throw new InvalidRedirectUri('redirect URI must not contain user information');

  // Exact matching needs one spelling per URI (see the file comment).
  if (url.href !== uri) throw new InvalidRedirectUri(`redirect URI is not in canonical form; register ${url.href}`);

  // A port of 0 can never be listened on: it is always a mistake or a trick.
  if (url.port === '0') throw new InvalidRedirectUri('redirect URI port 0 is not allowed');

  // OAuth 2.1 §2.3.1 and RFC 8252 §8.3: plain http only for the loopback interface.
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) throw new InvalidRedirectUri('redirect URI must use https unless its host is localhost, 127.0.0.1 or [::1]');
}

/** Throws InvalidRedirectUri unless `requested` matches one of the client's registered URIs. */
export function matchRedirectUri(registered: readonly string[], requested: string): void {
  // Spec 4.1 rule 4: a URI with a fragment is rejected.
  if (requested.includes('#')) throw new InvalidRedirectUri('redirect_uri must not contain a fragment');

  // Spec 4.1 rule 1: registered redirect URIs are matched exactly.
  if (registered.includes(requested)) return;

  // Spec 4.1 rules 2 and 3: a portless registered http loopback URI matches the same URI on any port.
  if (registered.some((uri) => matchesOnAnyPort(uri, requested))) return;

  throw new InvalidRedirectUri('redirect_uri does not match a registered redirect URI');
}

/**
 * RFC 8252 §7.3: native apps listen on an ephemeral loopback port, so only the port may differ. Scheme,
 * host, path and query must be identical, the registered URI must be http, loopback and portless, and the
 * requested one canonical and free of user information.
 */
function matchesOnAnyPort(registered: string, requested: string): boolean {
  const base = canonicalUrl(registered);
  if (!base || base.protocol !== 'http:' || !isLoopbackHost(base.hostname) || base.port !== '') return false;
  const candidate = canonicalUrl(requested);
  if (!candidate || candidate.username || candidate.password || candidate.port === '0') return false;
  candidate.port = '';
  return candidate.href === registered;
}

function canonicalUrl(uri: string): URL | null {
  if (!URL.canParse(uri)) return null;
  const url = new URL(uri);
  return url.href === uri ? url : null;
}
