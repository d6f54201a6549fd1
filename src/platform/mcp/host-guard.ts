/**
 * DNS rebinding protection for MCP endpoints. 2025-03-26 transport spec, "Security Warning": servers MUST
 * validate the Origin header, and local servers should bind to localhost. A page on evil.example that
 * re-resolves its name to 127.0.0.1 reaches us with `Host: evil.example` (and a foreign `Origin`), so both
 * headers are checked against the names this service is actually reached by. Matching is by hostname, port
 * ignored, as the SDK's validators do.
 */
import { localhostAllowedHostnames, validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';

export interface AllowedHostsSource {
  /** Public URLs the service is reached by (`CONTENT_PUBLIC_URL` / `ORG_PUBLIC_URL`). */
  publicUrls: readonly string[];
  /** The address the server binds (`HOST`); wildcard addresses name no host and are skipped. */
  bindHost: string;
}

const WILDCARD_BINDS = new Set(['0.0.0.0', '::', '[::]', '']);

/** Hostnames accepted in `Host` and `Origin`: loopback names, the public URLs' hosts and the bound address. */
export function allowedHostnames(source: AllowedHostsSource): string[] {
  const names = new Set(localhostAllowedHostnames());
  for (const url of source.publicUrls) {
    try {
      names.add(new URL(url).hostname.toLowerCase());
    } catch {
      // not a URL (a placeholder before listen): contributes no host
    }
  }
  const bind = source.bindHost.toLowerCase();
  if (!WILDCARD_BINDS.has(bind)) names.add(bind.includes(':') && !bind.startsWith('[') ? `[${bind}]` : bind);
  return [...names];
}

export type HostCheck = { ok: true } | { ok: false; message: string };

/** A missing `Origin` passes (non-browser clients send none); a present one must name an allowed host. */
export function checkHostAndOrigin(host: string | undefined, origin: string | undefined, allowed: readonly string[]): HostCheck {
  const list = allowed as string[];
  const hostResult = validateHostHeader(host, list);
  if (!hostResult.ok) return { ok: false, message: hostResult.message };
  const originResult = validateOriginHeader(origin, list);
  if (!originResult.ok) return { ok: false, message: originResult.message };
  return { ok: true };
}
