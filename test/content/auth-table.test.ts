/**
 * Spec 5.2, route by route: every protected operation answers 401 in the error shape with
 * `WWW-Authenticate: Bearer` when the secret is missing or wrong, and every public one serves an
 * anonymous client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../../src/content/rest/openapi.js';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { specRoutes, type SpecRoute } from '../helpers/content-routes.js';
import { engines } from '../helpers/databases.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** What the secret unlocks beyond whole routes (spec 5.2 "preview mode"). */
const previewReads: SpecRoute[] = [
  { method: 'GET', path: '/blog/{slug}?preview=true', auth: true },
  { method: 'GET', path: '/changelog/{identifier}?preview=true', auth: true },
];

const wrongCredentials: Array<[string, Record<string, string>]> = [
  ['no Authorization header', {}],
  ['a wrong secret', { authorization: 'Bearer wrong-secret-0123456789' }],
  ['the secret under another scheme', { authorization: 'Basic dGVzdDp0ZXN0' }],
  ['an empty bearer token', { authorization: 'Bearer ' }],
];

describe.each(engines)('authentication of every route on %s', (engine) => {
  let content: TestContent;
  let document: OpenApiDocument;
  const fixtures = { slug: 'public-post', identifier: 'v1-0-0', key: '', roadmap: 'public-item' };

  beforeAll(async () => {
    content = await startContent(engine, { inProcess: true });
    const create = async (path: string, json: object) => {
      const response = await content.request('POST', path, { json: { ...json, ...actor }, auth: true });
      expect(response.status, `${path}: ${response.text}`).toBe(201);
    };
    await create('/blog', { title: 'A public post', slug: fixtures.slug, content: 'Hello.', status: 'published' });
    await create('/changelog', { version: 'v1.0.0', status: 'published' });
    await create('/roadmap', { title: 'A public item', slug: fixtures.roadmap });
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'logo.png');
    form.append('actor_id', actor.actor_id);
    form.append('actor_type', actor.actor_type);
    const asset = await content.request('POST', '/assets/upload', { body: form, auth: true });
    fixtures.key = asset.body.key;
    document = (await content.request('GET', '/openapi.json')).body;
  });
  afterAll(() => content.close());

  /** A concrete request for a route: real fixtures in the path, a well-formed body for writes. */
  function concrete({ method, path }: SpecRoute): { url: string; json?: object; body?: FormData } {
    const url = path
      .replace('{slug}', path.startsWith('/roadmap') ? fixtures.roadmap : fixtures.slug)
      .replace('{identifier}', fixtures.identifier)
      .replace('{key}', fixtures.key)
      .replace(/^\/search$/, '/search?query=public');
    if (method === 'GET') return { url };
    if (path.endsWith('/vote')) return { url, json: { voter_id: 'reader-1' } };
    if (path === '/assets/upload') {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'a.png');
      form.append('actor_id', actor.actor_id);
      form.append('actor_type', actor.actor_type);
      return { url, body: form };
    }
    return { url, json: { ...actor } };
  }

  const protectedRoutes = [...specRoutes.filter((route) => route.auth), ...previewReads];
  const publicRoutes = specRoutes.filter((route) => !route.auth);

  describe.each(protectedRoutes)('$method $path', (route) => {
    it.each(wrongCredentials)('answers 401 to %s', async (_case, headers) => {
      const { url, json, body } = concrete(route);
      const response = await content.request(route.method, url, { json, body, headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(response.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    });
  });

  it.each(publicRoutes)('serves $method $path without the secret', async (route) => {
    const { url, json } = concrete(route);
    const response = await content.request(route.method, url, { json });
    expect(response.status, response.text.slice(0, 300)).toBe(200);
  });

  it('holds every documented route to its documented security, spec-listed or not', async () => {
    const checked: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      if (path === '/mcp') continue; // interface B authenticates in its own suite
      for (const [method, operation] of Object.entries(item)) {
        const route: SpecRoute = { method: method.toUpperCase() as SpecRoute['method'], path, auth: Boolean(operation.security?.length) };
        const { url, json, body } = concrete(route);
        const response = await content.request(route.method, url, { json, body });
        if (route.auth) expect(response.status, `${route.method} ${path}`).toBe(401);
        else expect(response.status, `${route.method} ${path}`).not.toBe(401);
        checked.push(`${route.method} ${path}`);
      }
    }
    expect(checked.length).toBeGreaterThanOrEqual(specRoutes.length);
  });
});
