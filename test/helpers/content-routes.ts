/**
 * The content REST API as spec 4.4 and 5.2 state it (plus DESIGN 3's schedule and changelog delete):
 * every route, and whether it needs the bearer secret. Tests hold the implementation to this table,
 * so it is written from the spec, not read from the code.
 */
export interface SpecRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** OpenAPI form, `{param}` for path parameters. */
  path: string;
  auth: boolean;
}

const route = (method: SpecRoute['method'], path: string, auth: boolean): SpecRoute => ({ method, path, auth });

export const specRoutes: SpecRoute[] = [
  route('GET', '/blog', false),
  route('GET', '/blog/drafts', true),
  route('GET', '/blog/{slug}', false),
  route('POST', '/blog', true),
  route('PATCH', '/blog/{slug}', true),
  route('POST', '/blog/{slug}/submit', true),
  route('POST', '/blog/{slug}/approve', true),
  route('POST', '/blog/{slug}/publish', true),
  route('POST', '/blog/{slug}/archive', true),
  route('POST', '/blog/{slug}/schedule', true),
  route('DELETE', '/blog/{slug}', true),
  route('GET', '/changelog', false),
  route('GET', '/changelog/drafts', true),
  route('GET', '/changelog/{identifier}', false),
  route('POST', '/changelog', true),
  route('PATCH', '/changelog/{identifier}', true),
  route('POST', '/changelog/{identifier}/submit', true),
  route('POST', '/changelog/{identifier}/approve', true),
  route('POST', '/changelog/{identifier}/publish', true),
  route('DELETE', '/changelog/{identifier}', true),
  route('GET', '/roadmap', false),
  route('GET', '/roadmap/all', true),
  route('GET', '/roadmap/{slug}', false),
  route('POST', '/roadmap', true),
  route('PATCH', '/roadmap/{slug}', true),
  route('POST', '/roadmap/{slug}/ship', true),
  route('POST', '/roadmap/bulk', true),
  route('POST', '/roadmap/{slug}/vote', false),
  route('DELETE', '/roadmap/{slug}/vote', false),
  route('POST', '/assets/upload', true),
  route('GET', '/assets/{key}', false),
  route('DELETE', '/assets/{key}', true),
  route('GET', '/search', false),
  route('GET', '/activity', true),
  route('POST', '/revalidate', true),
  route('GET', '/health', false),
];

/** Spec 8 (and 4.4): every list route's `limit` default and maximum. */
export const listLimits: Record<string, { default: number; maximum: number }> = {
  '/blog': { default: 20, maximum: 100 },
  '/blog/drafts': { default: 20, maximum: 100 },
  '/changelog': { default: 20, maximum: 100 },
  '/changelog/drafts': { default: 20, maximum: 100 },
  '/roadmap': { default: 50, maximum: 100 },
  '/roadmap/all': { default: 50, maximum: 100 },
  '/search': { default: 10, maximum: 50 },
  '/activity': { default: 50, maximum: 200 },
};
