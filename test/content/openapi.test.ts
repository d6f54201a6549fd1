import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonSchema, OpenApiDocument } from '../../src/content/rest/openapi.js';
import { startContent, type TestContent } from '../helpers/content.js';
import { listLimits, specRoutes } from '../helpers/content-routes.js';
import { engines } from '../helpers/databases.js';

describe.each(engines)('OpenAPI document and API reference on %s', (engine) => {
  let content: TestContent;
  let document: OpenApiDocument;
  beforeAll(async () => {
    content = await startContent(engine);
    const response = await content.request('GET', '/openapi.json');
    expect(response.status).toBe(200);
    document = response.body;
  });
  afterAll(() => content.close());

  const operation = (method: string, path: string) => document.paths[path]?.[method.toLowerCase()];

  it('is an OpenAPI 3.1 document naming the service and its bearer scheme', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.title).toBe('Atrium content API');
    expect(document.servers).toEqual([{ url: content.config.publicUrl }]);
    expect(document.components?.securitySchemes).toEqual({ bearerAuth: { type: 'http', scheme: 'bearer' } });
  });

  it.each(specRoutes)('documents $method $path with a tag, a summary and its auth', ({ method, path, auth }) => {
    const documented = operation(method, path);
    expect(documented, `${method} ${path} is missing`).toBeDefined();
    expect(documented!.tags?.length).toBeGreaterThan(0);
    expect(documented!.summary).toBeTruthy();
    expect(documented!.security ?? []).toEqual(auth ? [{ bearerAuth: [] }] : []);
    expect(Object.keys(documented!.responses ?? {})).toContain('4XX');
  });

  it('documents no route the service does not serve', async () => {
    for (const [path, item] of Object.entries(document.paths)) {
      if (path === '/mcp') continue; // JSON-RPC over HTTP, tested by the MCP suite; its GET is a stream
      for (const method of Object.keys(item)) {
        const concrete = path.replace('{key}', 'inline/none-0000000000.png').replace(/\{[^}]+\}/g, 'none');
        const response = await content.request(method.toUpperCase(), concrete, { auth: true, json: method === 'get' ? undefined : {} });
        expect(response.body?.error?.message ?? '', `${method} ${path}`).not.toMatch(/^no route for/);
      }
    }
  });

  it.each(Object.entries(listLimits))('documents the limit of %s as spec 8 sets it', (path, limits) => {
    const limit = operation('GET', path)?.parameters?.find((parameter) => parameter.name === 'limit');
    expect(limit?.in).toBe('query');
    expect(limit?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: limits.maximum, default: limits.default });
  });

  it('documents write bodies from the schemas that validate them: actor required, unknown fields refused', () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, documented] of Object.entries(item)) {
        if (method === 'get' || path === '/mcp' || path.endsWith('/vote')) continue;
        const [mediaType, { schema }] = Object.entries(documented.requestBody?.content ?? {})[0] ?? [];
        expect(mediaType, `${method} ${path}`).toMatch(/^(application\/json|multipart\/form-data)$/);
        expect(schema?.required, `${method} ${path}`).toEqual(expect.arrayContaining(['actor_id', 'actor_type']));
        expect((schema as JsonSchema & { additionalProperties?: boolean }).additionalProperties, `${method} ${path}`).toBe(false);
      }
    }
  });

  it('documents the upload as a multipart form with a binary file', () => {
    const upload = operation('POST', '/assets/upload')?.requestBody?.content['multipart/form-data']?.schema;
    expect(upload?.properties?.file).toMatchObject({ type: 'string', format: 'binary' });
    expect(upload?.properties?.type).toMatchObject({ enum: ['inline', 'og'], default: 'inline' });
    expect(upload?.required).toEqual(expect.arrayContaining(['file']));
    const key = operation('GET', '/assets/{key}')?.parameters?.find((parameter) => parameter.in === 'path');
    expect(key?.name).toBe('key');
  });

  it('serves /docs as Swagger UI with its scripts and styles from this service, over the same document', async () => {
    const entry = await fetch(`${content.url}/docs`);
    expect(entry.status).toBe(200);
    expect(entry.headers.get('content-type')).toContain('text/html');
    const page = await entry.text();
    const assets = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect(asset, 'no CDN').not.toMatch(/^(https?:)?\/\//);
      const response = await fetch(new URL(asset, entry.url));
      expect(response.status, asset).toBe(200);
      // Read to the end: a large body left unread holds its connection open, and the service's close waits for it.
      expect((await response.arrayBuffer()).byteLength, asset).toBeGreaterThan(0);
    }
    const served = (await fetch(`${content.url}/docs/json`).then((response) => response.json())) as OpenApiDocument;
    expect(Object.keys(served.paths).sort()).toEqual(Object.keys(document.paths).sort());
    expect(JSON.stringify(served)).not.toMatch(/DESIGN|interface [A-C]\b/);
  });

  it('describes /health and /mcp', () => {
    expect(operation('GET', '/health')?.description).toContain('503');
    expect(operation('POST', '/mcp')?.summary).toContain('MCP');
    expect(operation('POST', '/mcp')?.description).toContain('Mcp-Session-Id');
  });
});
