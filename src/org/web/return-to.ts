/**
 * Where to send the browser after sign-in. Only a same-origin relative path is accepted, so the sign-in
 * page can never be used as an open redirect (`//evil.example`, `/\evil.example`, `https://…` and
 * control characters are all refused).
 */
const BASE = 'http://return-to.invalid';

export const DEFAULT_RETURN_TO = '/connections';

export function safeReturnTo(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2048) return undefined;
  if (!value.startsWith('/') || value.startsWith('//') || /[\\\u0000-\u001f\u007f]/.test(value)) return undefined;
  const url = new URL(value, BASE);
  if (url.origin !== BASE) return undefined;
  return url.pathname + url.search + url.hash;
}

/** `/signin?return_to=<path>` for a page that needs a signed-in person. */
export function signInUrl(returnTo: string): string {
  return `/signin?${new URLSearchParams({ return_to: returnTo })}`;
}
