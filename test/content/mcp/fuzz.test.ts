/**
 * Every tool's arguments with wrong types and out-of-range values, generated from the tool's own published
 * input schema: each call must be answered (HTTP 200) with an `isError` result naming the argument
 * (`invalid_request`) or a JSON-RPC invalid-params error, never a crash, and must change nothing.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContent, type TestContent } from '../../helpers/content.js';
import { engines } from '../../helpers/databases.js';
import { openSession, post, sessionHeaders, TOOL_NAMES } from '../../helpers/content-mcp-client.js';

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  maxItems?: number;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  format?: string;
};
interface ToolInfo {
  name: string;
  inputSchema: { properties: Record<string, JsonSchema>; required?: string[] };
}

/** Valid values for required arguments, naming records that exist (so a mistake would reach the domain). */
const BASE: Record<string, Record<string, unknown>> = {
  get_blog_post: { slug: 'fuzz-post' },
  update_blog_post: { slug: 'fuzz-post' },
  publish_blog_post: { slug: 'fuzz-post' },
  delete_blog_post: { slug: 'fuzz-post' },
  create_blog_post: { title: 'Fuzzed title' },
  get_changelog_entry: { identifier: 'v9.9.9' },
  update_changelog_entry: { identifier: 'v9.9.9' },
  delete_changelog_entry: { identifier: 'v9.9.9' },
  create_changelog_entry: { version: 'v8.8.8' },
  get_roadmap_item: { slug: 'fuzz-item' },
  update_roadmap_item: { slug: 'fuzz-item' },
  delete_roadmap_item: { slug: 'fuzz-item' },
  create_roadmap_item: { title: 'Fuzzed item' },
  search_content: { query: 'fuzz' },
};

/** Values of every JSON type; those the property's type admits are filtered out below. */
const ANY_TYPE: Array<[string, unknown]> = [
  ['string', 'text'],
  ['integer', 7],
  ['number', 2.5],
  ['boolean', true],
  ['null', null],
  ['array', ['a']],
  ['object', { nested: 1 }],
];

function typesOf(schema: JsonSchema): string[] {
  if (schema.anyOf) return schema.anyOf.flatMap(typesOf);
  if (schema.enum) return [...new Set(schema.enum.map((value) => (value === null ? 'null' : typeof value)))];
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  return types.includes('integer') ? [...types, 'number'] : types;
}

/** Values that break the property's schema: other JSON types, and values just outside its ranges. */
function badValues(schema: JsonSchema): unknown[] {
  const types = typesOf(schema);
  const wrongTypes = ANY_TYPE.filter(([type, value]) => !types.includes(type) && !(type === 'integer' && types.includes('number') && Number.isInteger(value)))
    .map(([, value]) => value);
  const variants = schema.anyOf ?? [schema];
  const outOfRange = variants.flatMap((s) => {
    const values: unknown[] = [];
    if (s.enum) values.push('not-a-listed-value', String(s.enum[0]).toUpperCase() + '!');
    if (s.type === 'integer') {
      values.push(1.5, Number.MAX_SAFE_INTEGER * 4);
      if (s.minimum !== undefined) values.push(s.minimum - 1, -1_000_000);
      if (s.maximum !== undefined) values.push(s.maximum + 1);
    }
    if (s.type === 'string') {
      if (s.minLength) values.push('x'.repeat(s.minLength - 1));
      if (s.maxLength !== undefined && s.maxLength < 300_000) values.push('y'.repeat(s.maxLength + 1));
      if (s.pattern || s.format) values.push('!! not / the / right form ??');
    }
    if (s.type === 'array') {
      values.push([42], [null], [{}]);
      if (s.items) values.push(...badValues(s.items).slice(0, 3).map((item) => [item]));
      if (s.maxItems !== undefined) values.push(Array.from({ length: s.maxItems + 1 }, (_, i) => `item-${i}`));
    }
    return values;
  });
  return [...wrongTypes, ...outOfRange];
}

describe.each(engines)('content MCP argument fuzzing on %s', (engine) => {
  let content: TestContent;
  let session: string;
  let tools: ToolInfo[];
  let id = 0;

  beforeAll(async () => {
    content = await startContent(engine);
    session = await openSession(content.url, 'fuzz-agent');
    const rpc = (name: string, args: unknown) => callTool(name, args);
    // Records the BASE arguments point at, in states where a wrongly accepted call would change them.
    await rpc('create_blog_post', { title: 'Fuzz post' });
    await rpc('create_changelog_entry', { version: 'v9.9.9', content: 'notes' });
    await rpc('create_roadmap_item', { title: 'Fuzz item' });
    const listed = await post(content.url, { jsonrpc: '2.0', id: ++id, method: 'tools/list' }, sessionHeaders(session));
    tools = listed.json.result.tools;
    // Let the jobs the fixtures queued (revalidations) finish, so the queue holds still while the cases run.
    await content.settleJobs();
  });
  afterAll(() => content.close());

  async function callTool(name: string, args: unknown) {
    const response = await post(
      content.url,
      { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } },
      sessionHeaders(session),
    );
    expect(response.status).toBe(200);
    return response.json;
  }

  /** Everything a wrongly accepted call could have changed. */
  async function fingerprint(): Promise<string> {
    const rows = await content.service.ctx.database.rows(sql`
      SELECT (SELECT count(*) FROM blog_posts) AS posts, (SELECT max(updated_at)::text FROM blog_posts) AS posts_at,
             (SELECT string_agg(status, ',' ORDER BY slug) FROM blog_posts) AS post_states,
             (SELECT count(*) FROM changelog_entries) AS entries, (SELECT max(updated_at)::text FROM changelog_entries) AS entries_at,
             (SELECT count(*) FROM roadmap_items) AS items, (SELECT max(updated_at)::text FROM roadmap_items) AS items_at,
             (SELECT count(*) FROM roadmap_votes) AS votes, (SELECT count(*) FROM activity) AS activity,
             (SELECT count(*) FROM jobs) AS jobs`);
    return JSON.stringify(rows);
  }

  function expectRefused(response: any, label: string, argument?: string) {
    if (response.error) {
      expect(response.error.code, label).toBe(-32602);
      return;
    }
    expect(response.result.isError, `${label}: ${JSON.stringify(response.result)}`).toBe(true);
    const body = JSON.parse(response.result.content[0].text);
    expect(body.error.code, label).toBe('invalid_request');
    if (argument) expect(body.error.message, label).toContain(argument);
  }

  it('covers all 19 tools', () => {
    expect(tools).toHaveLength(19);
  });

  it.each(TOOL_NAMES)('%s refuses wrong types and out-of-range values without writing', async (name) => {
    const tool = tools.find((t) => t.name === name)!;
    const base = BASE[name] ?? {};
    const before = await fingerprint();
    let cases = 0;

    for (const [property, schema] of Object.entries(tool.inputSchema.properties)) {
      for (const value of badValues(schema)) {
        cases++;
        expectRefused(await callTool(name, { ...base, [property]: value }), `${name}.${property} = ${JSON.stringify(value)?.slice(0, 40)}`, property);
      }
    }
    for (const required of tool.inputSchema.required ?? []) {
      const { [required]: _dropped, ...missing } = base;
      expectRefused(await callTool(name, missing), `${name} without ${required}`, required);
    }
    expectRefused(await callTool(name, { ...base, unexpected_argument: 1 }), `${name} with an unknown argument`, 'unexpected_argument');
    for (const notAnObject of [[1, 2], 'text', 42, true]) {
      expectRefused(await callTool(name, notAnObject), `${name} with arguments ${JSON.stringify(notAnObject)}`);
    }

    expect(cases).toBeGreaterThan(name === 'get_asset_upload_url' ? -1 : 3);
    expect(await fingerprint()).toBe(before);
  });
});
