/**
 * Generated bad input over every write route and every list route: malformed JSON, wrong
 * types for each field, unknown enum values, oversized strings, out-of-range limits, missing required
 * fields and unknown fields always answer 4xx in the error shape — never 500 — and change nothing.
 *
 * The cases are generated from the OpenAPI document, which is itself generated from the zod schemas that
 * validate the requests, so a field added to a route is covered without touching this file.
 */
import { readdir } from 'node:fs/promises';
import { getTableName, is, sql } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as contentSchema from '../../src/content/schema.js';
import type { JsonSchema, OpenApiDocument, OpenApiOperation } from '../../src/content/rest/openapi.js';
import { jobs } from '../../src/platform/schema.js';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';

type Schema = JsonSchema & { additionalProperties?: boolean | JsonSchema; format?: string };
type Path = Array<string | number>;

interface BadRequest {
  name: string;
  /** Sent as is, with this content type. */
  raw?: { body: string | Uint8Array<ArrayBuffer>; contentType: string };
  json?: unknown;
  query?: string;
  /** Exact status and code when the case knows them; otherwise any 4xx. */
  status?: number;
  code?: string;
  /** The request field the refusal must name (`body.title`, `querystring.limit`). */
  field?: string;
}

const BODY_LIMIT = 1024 * 1024;
const UNKNOWN_ENUM = 'not-a-known-value';

// ---------------------------------------------------------------------------------------------------
// Valid values, so that each case is wrong in exactly one place.

const STRING_CANDIDATES = ['abc', 'v9.8.7', 'Q1 2031', '2031-01-01T00:00:00Z', 'reader@example.com', 'https://example.com/a.png'];

function sample(schema: Schema): unknown {
  const variant = schema.anyOf?.find((option) => option.type !== 'null') ?? schema.oneOf?.[0];
  if (variant) return sample(variant);
  if (schema.enum) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  switch ([schema.type].flat()[0]) {
    case 'string':
      return sampleString(schema);
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sample(schema.items ?? {}));
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((name) => [name, sample(schema.properties?.[name] ?? {})]));
    default:
      return 'abc';
  }
}

function sampleString(schema: Schema): string {
  if (schema.format === 'uri') return 'https://example.com/a.png';
  if (schema.format === 'email') return 'reader@example.com';
  const candidates = [...STRING_CANDIDATES, 'x'.repeat(Math.max(schema.minLength ?? 1, 1))];
  const valid = candidates.find((value) => fitsLength(schema, value) && (!schema.pattern || new RegExp(schema.pattern).test(value)));
  if (!valid) throw new Error(`no sample for ${JSON.stringify(schema)}: add a candidate`);
  return valid;
}

function fitsLength(schema: Schema, value: string): boolean {
  return value.length >= (schema.minLength ?? 0) && value.length <= (schema.maxLength ?? Infinity);
}

// ---------------------------------------------------------------------------------------------------
// Wrong values for one field, derived from its schema.

type JsonKind = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';

function allowedKinds(schema: Schema): Set<JsonKind> {
  const kinds = new Set<JsonKind>();
  for (const option of [schema, ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    for (const type of [option.type ?? []].flat()) kinds.add(type as JsonKind);
    for (const value of option.enum ?? []) kinds.add(value === null ? 'null' : (typeof value as JsonKind));
  }
  if (kinds.has('number')) kinds.add('integer');
  return kinds;
}

const WRONG_KINDS: Array<[JsonKind, unknown]> = [
  ['string', 'text'],
  ['integer', 12345],
  ['number', 1.5],
  ['boolean', true],
  ['null', null],
  ['array', []],
  ['object', {}],
];

/** Every single-field mistake the schema lets us name, with the value that makes it. */
function wrongValuesFor(schema: Schema): Array<[string, unknown]> {
  const allowed = allowedKinds(schema);
  if (allowed.size === 0) return [];
  const wrong: Array<[string, unknown]> = WRONG_KINDS.filter(([kind]) => !allowed.has(kind)).map(([kind, value]) => [`a ${kind}`, value]);
  const string = [schema, ...(schema.anyOf ?? [])].find((option) => option.type === 'string');
  if (string?.enum) wrong.push(['an unknown enum value', UNKNOWN_ENUM]);
  else if (string) {
    if (string.maxLength !== undefined && string.maxLength < BODY_LIMIT / 2) wrong.push([`${string.maxLength + 1} characters`, 'x'.repeat(string.maxLength + 1)]);
    if ((string.minLength ?? 0) > 0) wrong.push([`${string.minLength! - 1} characters`, 'x'.repeat(string.minLength! - 1)]);
    const pattern = string.pattern ? new RegExp(string.pattern) : null;
    const breaksPattern = ['Not Valid!', '../x', 'x y z'].find((value) => pattern && !pattern.test(value) && fitsLength(string, value));
    if (breaksPattern) wrong.push(['a value breaking the pattern', breaksPattern]);
    if (string.format === 'uri') wrong.push(['a value that is not a URL', 'not a url']);
    if (string.format === 'email') wrong.push(['a value that is not an email address', 'not an email']);
  }
  const number = [schema, ...(schema.anyOf ?? [])].find((option) => option.type === 'integer' || option.type === 'number');
  if (number?.minimum !== undefined) wrong.push(['below the minimum', number.minimum - 1]);
  if (number?.maximum !== undefined) wrong.push(['above the maximum', number.maximum + 1]);
  const array = [schema, ...(schema.anyOf ?? [])].find((option) => option.type === 'array');
  if (array?.maxItems !== undefined) wrong.push([`${array.maxItems + 1} items`, Array.from({ length: array.maxItems + 1 }, () => sample(array.items ?? {}))]);
  if ((array?.minItems ?? 0) > 0) wrong.push(['too few items', []]);
  return wrong;
}

function setAt(target: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const copy = (Array.isArray(target) ? [...target] : { ...(target as object) }) as Record<string | number, unknown>;
  copy[head] = setAt(copy[head], rest, value);
  return copy;
}

function omitAt(target: unknown, path: Path): unknown {
  const parentPath = path.slice(0, -1);
  const key = path[path.length - 1];
  const parent = parentPath.reduce<any>((node, step) => node[step], target);
  const { [key]: _dropped, ...rest } = parent as Record<string | number, unknown>;
  return setAt(target, parentPath, rest);
}

/** Field-level cases for an object schema at `path` inside a valid `base` body, recursing into arrays of objects. */
function fieldCases(schema: Schema, base: unknown, path: Path = []): BadRequest[] {
  const cases: BadRequest[] = [];
  const at = (p: Path) => ['body', ...p].join('.');
  for (const name of schema.required ?? []) {
    cases.push({ name: `missing ${at([...path, name])}`, json: omitAt(base, [...path, name]), status: 400, code: 'invalid_request', field: at([...path, name]) });
  }
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const fieldPath = [...path, name];
    for (const [what, value] of wrongValuesFor(property)) {
      cases.push({ name: `${at(fieldPath)} as ${what}`, json: setAt(base, fieldPath, value), status: 400, code: 'invalid_request', field: at(fieldPath) });
    }
    if ([property, ...(property.anyOf ?? [])].some((option) => option.type === 'string' && !option.enum)) {
      // PostgreSQL text cannot hold U+0000: refused before the database sees it.
      cases.push({ name: `${at(fieldPath)} with a NUL character`, json: setAt(base, fieldPath, 'ab\u0000cd'), status: 400, code: 'invalid_request' });
    }
    const items = [property, ...(property.anyOf ?? [])].find((option) => option.type === 'array')?.items as Schema | undefined;
    if (items) {
      const item = sample(items);
      const withItem = setAt(base, fieldPath, [item]);
      for (const [what, value] of wrongValuesFor(items)) {
        cases.push({ name: `${at([...fieldPath, 0])} as ${what}`, json: setAt(withItem, [...fieldPath, 0], value), status: 400, code: 'invalid_request', field: at([...fieldPath, 0]) });
      }
      if (items.type === 'object') cases.push(...fieldCases(items, withItem, [...fieldPath, 0]));
    }
  }
  if (schema.additionalProperties === false) {
    cases.push({ name: `an unknown field in ${at(path)}`, json: setAt(base, [...path, 'zzz_unknown'], 1), status: 400, code: 'invalid_request', field: 'zzz_unknown' });
  }
  return cases;
}

/** Mistakes in the request as a whole, whatever the route. */
function wholeBodyCases(base: unknown): BadRequest[] {
  const json = 'application/json';
  return [
    { name: 'malformed JSON', raw: { body: '{"actor_id": "x",', contentType: json }, status: 400, code: 'invalid_request' },
    { name: 'an empty JSON body', raw: { body: '', contentType: json }, status: 400, code: 'invalid_request' },
    { name: 'a JSON array', raw: { body: '[]', contentType: json }, status: 400, code: 'invalid_request' },
    { name: 'JSON null', raw: { body: 'null', contentType: json }, status: 400, code: 'invalid_request' },
    { name: 'a JSON string', raw: { body: '"text"', contentType: json }, status: 400, code: 'invalid_request' },
    { name: 'a JSON number', raw: { body: '42', contentType: json }, status: 400, code: 'invalid_request' },
    {
      name: 'a __proto__ key',
      raw: { body: JSON.stringify(base).replace(/^\{/, '{"__proto__": {"polluted": true},'), contentType: json },
      status: 400,
      code: 'invalid_request',
    },
    // Fastify reads text/plain as a string, which is not the object the route wants.
    { name: 'a text/plain body', raw: { body: JSON.stringify(base), contentType: 'text/plain' }, status: 400, code: 'invalid_request' },
    { name: 'a form-encoded body', raw: { body: 'actor_id=x&actor_type=human', contentType: 'application/x-www-form-urlencoded' }, status: 415, code: 'unsupported_media_type' },
    {
      name: 'a body over 1 MiB',
      json: { ...(base as object), zzz_padding: 'x'.repeat(BODY_LIMIT + 1024) },
      status: 413,
      code: 'payload_too_large',
    },
  ];
}

const latin1 = (text: string) => Uint8Array.from(Buffer.from(text, 'latin1'));

/** A decodable image: uploads are checked by their image header, not by their magic bytes alone. */
const ONE_PIXEL_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** Broken multipart framing for the upload route (its field cases live in assets.test.ts). */
function multipartCases(): BadRequest[] {
  const boundary = 'atrium-bad-input';
  const part = `--${boundary}\r\nContent-Disposition: form-data; name="actor_id"\r\n\r\nx\r\n`;
  return [
    { name: 'multipart without a boundary', raw: { body: part, contentType: 'multipart/form-data' } },
    { name: 'multipart cut off mid-part', raw: { body: part.slice(0, 40), contentType: `multipart/form-data; boundary=${boundary}` } },
    { name: 'multipart with no closing boundary', raw: { body: part, contentType: `multipart/form-data; boundary=${boundary}` } },
    { name: 'garbage declared as multipart', raw: { body: 'not multipart at all', contentType: `multipart/form-data; boundary=${boundary}` } },
    { name: 'an empty multipart body', raw: { body: '', contentType: `multipart/form-data; boundary=${boundary}` } },
    {
      name: 'a well-formed form whose actor holds a NUL character',
      raw: {
        // latin1 keeps every character one byte, so the file part is a real, decodable 1×1 PNG.
        body: latin1(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n` +
          `${ONE_PIXEL_PNG.toString('latin1')}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="actor_id"\r\n\r\nab\u0000cd\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="actor_type"\r\n\r\nhuman\r\n--${boundary}--\r\n`,
        ),
        contentType: `multipart/form-data; boundary=${boundary}`,
      },
      status: 400,
      code: 'invalid_request',
    },
    {
      name: 'a __proto__ field',
      raw: { body: `--${boundary}\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nx\r\n--${boundary}--\r\n`, contentType: `multipart/form-data; boundary=${boundary}` },
    },
  ];
}

/** Query mistakes for every query parameter a read documents. */
function queryCases(operation: OpenApiOperation): BadRequest[] {
  const cases: BadRequest[] = [];
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== 'query') continue;
    const schema = (parameter.schema ?? {}) as Schema;
    const field = `querystring.${parameter.name}`;
    const values: Array<[string, string]> = [];
    if (schema.type === 'integer' || schema.type === 'number') {
      values.push(['not a number', 'abc'], ['a fraction', '1.5'], ['negative', '-1']);
      if (schema.minimum !== undefined) values.push(['below the minimum', String(schema.minimum - 1)]);
      if (schema.maximum !== undefined) values.push(['above the maximum', String(schema.maximum + 1)], ['huge', '1e400']);
    }
    if (schema.enum) values.push(['an unknown value', UNKNOWN_ENUM]);
    if (schema.pattern && !new RegExp(schema.pattern).test('not-a-date')) values.push(['a value breaking the pattern', 'not-a-date']);
    if (schema.maxLength !== undefined) values.push([`${schema.maxLength + 1} characters`, 'x'.repeat(schema.maxLength + 1)]);
    if ((schema.minLength ?? 0) > 0) values.push(['empty', '']);
    for (const [what, value] of values) {
      cases.push({ name: `${field} ${what}`, query: `${parameter.name}=${encodeURIComponent(value)}`, status: 400, code: 'invalid_request', field });
    }
    if (schema.type === 'string' && !schema.enum && !schema.pattern) {
      cases.push({ name: `${field} with a NUL character`, query: `${parameter.name}=ab%00cd`, status: 400, code: 'invalid_request' });
    }
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------------

describe.each(engines)('bad input changes nothing on %s', (engine) => {
  let content: TestContent;
  let document: OpenApiDocument;
  const fixtures = { blog: 'draft-post', changelog: 'v2-0-0', roadmap: 'target-item', key: '' };
  const tables = [...Object.values(contentSchema).filter((value) => is(value, PgTable)), jobs].map((table) => getTableName(table as PgTable));

  /** Every row of every content table (and the job queue), plus the files under the asset directory. */
  async function snapshot(): Promise<Record<string, string[]>> {
    const state: Record<string, string[]> = {};
    for (const table of tables) {
      const rows = await content.service.ctx.database.rows<{ row: string }>(sql.raw(`SELECT row_to_json(t)::text AS row FROM "${table}" t ORDER BY 1`));
      state[table] = rows.map((entry) => entry.row);
    }
    state.assets = (await readdir(content.config.assetDir, { recursive: true }).catch(() => [])).map(String).sort();
    return state;
  }

  beforeAll(async () => {
    content = await startContent(engine, { inProcess: true });
    const create = async (path: string, json: object) => {
      const response = await content.request('POST', path, { json: { ...json, ...actor }, auth: true });
      expect(response.status, `${path}: ${response.text}`).toBe(201);
    };
    await create('/blog', { title: 'A draft post', slug: fixtures.blog, content: 'Draft.' });
    await create('/changelog', { version: 'v2.0.0' });
    await create('/roadmap', { title: 'A target item', slug: fixtures.roadmap });
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(ONE_PIXEL_PNG)], { type: 'image/png' }), 'a.png');
    form.append('actor_id', actor.actor_id);
    form.append('actor_type', actor.actor_type);
    fixtures.key = (await content.request('POST', '/assets/upload', { body: form, auth: true })).body.key;
    document = (await content.request('GET', '/openapi.json')).body;
    // Let any job the fixtures queued finish, so the queue holds still while the cases run.
    await content.settleJobs();
  });
  afterAll(() => content.close());

  function concretePath(path: string): string {
    return path
      .replace('{slug}', path.startsWith('/roadmap') ? fixtures.roadmap : fixtures.blog)
      .replace('{identifier}', fixtures.changelog)
      .replace('{key}', fixtures.key);
  }

  async function send(method: string, path: string, request: BadRequest) {
    const url = request.query ? `${path}?${request.query}` : path;
    if (request.raw) {
      return content.request(method, url, { body: request.raw.body, headers: { 'content-type': request.raw.contentType }, auth: true });
    }
    return content.request(method, url, { json: request.json, auth: true });
  }

  function expectRefusal(response: Awaited<ReturnType<typeof send>>, request: BadRequest, label: string) {
    expect(response.status, `${label}: ${response.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
    expect(response.status, `${label}: ${response.text.slice(0, 300)}`).toBeLessThan(500);
    if (request.status) expect(response.status, label).toBe(request.status);
    expect(response.body, label).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
    if (request.code) expect(response.body.error.code, label).toBe(request.code);
    if (request.field) {
      const issues: Array<{ field: string; message: string }> = response.body.error.details?.issues ?? [];
      const named = issues.some((issue) => issue.field === request.field || issue.field.startsWith(`${request.field}.`) || issue.message.includes(request.field!));
      expect(named, `${label} should name ${request.field}: ${JSON.stringify(issues)}`).toBe(true);
    }
  }

  function writeRoutes(): Array<{ method: string; path: string; operation: OpenApiOperation }> {
    return Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => method !== 'get' && path !== '/mcp')
        .map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })),
    );
  }

  it('covers every write route of the document', () => {
    const routes = writeRoutes().map(({ method, path }) => `${method} ${path}`);
    expect(routes).toEqual(expect.arrayContaining(['POST /blog', 'PATCH /roadmap/{slug}', 'POST /roadmap/bulk', 'DELETE /assets/{key}', 'POST /assets/upload', 'POST /revalidate']));
  });

  it('refuses every generated bad write with a 4xx and changes nothing', async () => {
    let sent = 0;
    for (const { method, path, operation } of writeRoutes()) {
      const [mediaType, { schema } = { schema: undefined }] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
      const requests =
        mediaType === 'multipart/form-data'
          ? multipartCases()
          : [...wholeBodyCases(sample(schema ?? {})), ...(schema ? fieldCases(schema as Schema, sample(schema)) : [])];
      const before = await snapshot();
      for (const request of requests) {
        expectRefusal(await send(method, concretePath(path), request), request, `${method} ${path} with ${request.name}`);
        sent++;
      }
      expect(await snapshot(), `${method} ${path} changed the database`).toEqual(before);
    }
    expect(sent).toBeGreaterThan(300);
  });

  it('refuses out-of-range limits and unknown values on every read, in the error shape', async () => {
    let sent = 0;
    const before = await snapshot();
    for (const [path, item] of Object.entries(document.paths)) {
      const operation = item.get;
      if (!operation || path === '/mcp') continue;
      const required = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query' && parameter.required);
      const requiredQuery = required.map((parameter) => `${parameter.name}=${encodeURIComponent(String(sample(parameter.schema ?? {})))}`);
      for (const request of queryCases(operation)) {
        const own = request.query!.split('=')[0];
        const query = [...requiredQuery.filter((pair) => !pair.startsWith(`${own}=`)), request.query].join('&');
        expectRefusal(await send('GET', concretePath(path), { ...request, query }), request, `GET ${path} with ${request.name}`);
        sent++;
      }
    }
    expect(sent).toBeGreaterThan(40);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses path parameters that cannot name anything', async () => {
    const before = await snapshot();
    for (const { method, path, operation } of writeRoutes()) {
      const schema = operation.requestBody?.content['application/json']?.schema;
      if (!/\{(slug|identifier|key)\}/.test(path) || !schema) continue;
      for (const bad of ['x'.repeat(300), '%00', '..%2F..%2Fetc', 'UPPER%20case']) {
        const url = path.replace(/\{(slug|identifier|key)\}/, bad);
        // A well-formed body, so only the path is wrong.
        const response = await content.request(method, url, { json: sample(schema), auth: true });
        expectRefusal(response, {} as BadRequest, `${method} ${url}`);
      }
    }
    expect(await snapshot()).toEqual(before);
  });
});
