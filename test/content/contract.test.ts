/**
 * The content service's boundary (content/contract.ts; DESIGN 2, issue 17): the MCP server serves exactly the
 * contract's tools with the contract's schemas, the REST request the contract gives for each write is one the
 * REST API answers, and the contract reaches no domain code, so the organization can load it alone.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_TOOL_INPUTS, CONTENT_WRITE_ACTIONS, contentRequest, type ContentToolName } from '../../src/content/contract.js';
import { contentTools } from '../../src/content/mcp/server.js';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';
import { TOOL_NAMES } from '../helpers/content-mcp-client.js';

describe('the content contract', () => {
  it('names every tool the MCP server serves, and the server takes each schema from it', () => {
    expect(Object.keys(CONTENT_TOOL_INPUTS).sort()).toEqual([...TOOL_NAMES].sort());
    for (const tool of contentTools) expect(tool.input).toBe(CONTENT_TOOL_INPUTS[tool.name as ContentToolName]);
  });

  it('imports nothing but zod and the pure field checks', () => {
    const source = (file: string) => readFileSync(path.resolve('src/content', file), 'utf8');
    const imports = (text: string) => [...text.matchAll(/^import[^;]*?from '([^']+)';/gms)].map((match) => match[1]);
    expect(imports(source('contract.ts'))).toEqual(['zod', './fields.js']);
    expect(imports(source('fields.ts'))).toEqual(['zod', '../platform/time.js']);
  });

  it('gives REST requests for write tools only', () => {
    const writes = contentTools.filter((tool) => tool.annotations.readOnlyHint === false).map((tool) => tool.name);
    for (const action of CONTENT_WRITE_ACTIONS) expect(writes).toContain(action);
  });

  it('refuses an action that is not a write tool', () => {
    expect(() => contentRequest('get_blog_post', { slug: 'a' })).toThrow('unknown content action get_blog_post');
  });
});

describe.each(engines)('the contract’s REST requests on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    content = await startContent(engine);
  });
  afterAll(() => content.close());

  /** Sends the contract's request for `action` with the actor the connector adds, the arguments checked by the tool's schema. */
  async function send(action: ContentToolName, args: Record<string, unknown>) {
    const parsed = CONTENT_TOOL_INPUTS[action].parse(args) as Record<string, unknown>;
    const request = contentRequest(action, parsed);
    return content.request(request.method, request.path, { auth: true, json: { ...request.body, ...actor } });
  }

  it('creates, updates, publishes and deletes a blog post', async () => {
    const created = await send('create_blog_post', { title: 'Sent through the contract' });
    expect(created.status).toBe(201);
    const slug = created.body.slug;
    expect((await send('update_blog_post', { slug, content: 'New body' })).body).toMatchObject({ slug, content: 'New body' });
    expect((await send('publish_blog_post', { slug })).body).toMatchObject({ slug, status: 'published' });
    const draft = (await send('create_blog_post', { title: 'A draft to delete' })).body.slug;
    expect((await send('delete_blog_post', { slug: draft })).body).toEqual({ slug: draft, deleted: true });
  });

  it('creates and deletes a changelog entry, by version', async () => {
    const created = await send('create_changelog_entry', { version: 'v7.0.1', content: 'Notes' });
    expect(created.status).toBe(201);
    expect((await send('delete_changelog_entry', { identifier: 'v7.0.1' })).body).toMatchObject({ version: 'v7.0.1', deleted: true });
  });

  it('creates, updates and deletes a roadmap item', async () => {
    const created = await send('create_roadmap_item', { title: 'Through the contract', priority: 'high' });
    expect(created.status).toBe(201);
    const slug = created.body.slug;
    expect((await send('update_roadmap_item', { slug, status: 'in_progress' })).body).toMatchObject({ slug, status: 'in_progress' });
    expect((await send('delete_roadmap_item', { slug })).body).toEqual({ slug, deleted: true });
  });
});
