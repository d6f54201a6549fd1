/**
 * Where to send the browser after sign-in. Only a same-origin relative path is accepted, so the sign-in
 * page can never be used as an open redirect (`//evil.example`, `/\evil.example`, `https://…` and
 * control characters are all refused). The check is made again on the path `new URL()` normalised: dot
 * segments (`/..//evil.example`, `/%2e%2e//evil.example`) collapse into `//evil.example`, which a browser
 * reads as another host (RFC 3986 §4.2, a network-path reference).
 */
const BASE = 'http://return-to.invalid';

/** Where signing in lands when no page sent the person: the home page, which lists everything else. */
export const DEFAULT_RETURN_TO = '/';

export function safeReturnTo(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2048) return undefined;
  // Control characters are exactly what a return path may not carry (a header split, a hidden redirect).
  // eslint-disable-next-line no-control-regex
  if (!value.startsWith('/') || value.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(value)) return undefined;
  const url = new URL(value, BASE);
  if (url.origin !== BASE) return undefined;
  const target = url.pathname + url.search + url.hash;
  return /^\/[/\\]/.test(target) ? undefined : target;
}

/** `/signin?return_to=<path>` for a page that needs a signed-in person. */
export function signInUrl(returnTo: string): string {
  return `/signin?${new URLSearchParams({ return_to: returnTo })}`;
}
