/**
 * The 19 tools of spec 4.3 through the official SDK client (Streamable HTTP client transport, bearer header):
 * each tool's success, and every refusal of spec 7.2 that an MCP tool can meet, with the catalogued error
 * body (DESIGN 3) and nothing changed by a refused call.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, startContent, type TestContent } from '../../helpers/content.js';
import { engines } from '../../helpers/databases.js';
import { AGENT_NAME, callError, callOk, connectClient, TOOL_NAMES, type Connected } from '../../helpers/content-mcp-client.js';

/** A post that passes submit validation (DESIGN 3), so it can be put in review over REST. */
const READY_POST = {
  title: 'A post ready for review',
  description: 'An SEO description that is comfortably longer than fifty characters.',
  content: 'Body text. '.repeat(40),
  tags: ['news'],
};

describe.each(engines)('content MCP tools on %s', (engine) => {
  let content: TestContent;
  let mcp: Connected;
  beforeAll(async () => {
    content = await startContent(engine);
    mcp = await connectClient(content.url);
  });
  afterAll(async () => {
    await mcp?.close();
    await content.close();
  });

  const call = (name: string, args: Record<string, unknown> = {}) => callOk(mcp.client, name, args);
  const refuse = (name: string, args: Record<string, unknown> = {}) => callError(mcp.client, name, args);
  const rest = (method: string, path: string, json?: unknown) => content.request(method, path, { auth: true, json });

  describe('tools/list', () => {
    it('lists exactly the 19 tools, each with a description and an object input schema', async () => {
      const { tools } = await mcp.client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
      for (const tool of tools) {
        expect(tool.description, tool.name).toBeTruthy();
        expect(tool.inputSchema.type, tool.name).toBe('object');
        expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
      }
    });

    it('marks reads read-only and deletes destructive, and tells a model to have a person confirm deletes', async () => {
      const { tools } = await mcp.client.listTools();
      for (const tool of tools) {
        const isRead = /^(list|get|search)_/.test(tool.name);
        const isDelete = tool.name.startsWith('delete_');
        expect(tool.annotations?.readOnlyHint, tool.name).toBe(isRead);
        if (!isRead) expect(tool.annotations?.destructiveHint, tool.name).toBe(isDelete);
        if (isDelete) expect(tool.description, tool.name).toMatch(/irreversible.*person should confirm/i);
      }
      const descriptionOf = (name: string) => tools.find((tool) => tool.name === name)!.description;
      expect(descriptionOf('delete_blog_post')).toMatch(/only a draft/i);
      expect(descriptionOf('delete_changelog_entry')).toMatch(/only a draft/i);
      expect(descriptionOf('delete_roadmap_item')).toMatch(/shipped item cannot be deleted/i);
    });

    it('describes parameters, defaults and ranges of spec 4.3', async () => {
      const { tools } = await mcp.client.listTools();
      const props = (name: string) => tools.find((tool) => tool.name === name)!.inputSchema.properties as Record<string, any>;
      const required = (name: string) => tools.find((tool) => tool.name === name)!.inputSchema.required ?? [];
      expect(props('list_blog_posts').limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
      expect(props('list_changelog_entries').limit).toMatchObject({ minimum: 1, maximum: 100, default: 20 });
      expect(props('list_roadmap_items').limit).toMatchObject({ minimum: 1, maximum: 100, default: 50 });
      expect(props('search_content').limit).toMatchObject({ minimum: 1, maximum: 50, default: 10 });
      expect(props('get_activity_log').limit).toMatchObject({ minimum: 1, maximum: 200, default: 50 });
      expect(props('get_blog_post').include_drafts).toMatchObject({ type: 'boolean', default: false });
      expect(props('create_blog_post').status).toMatchObject({ enum: ['draft', 'published'], default: 'draft' });
      expect(props('create_blog_post').description).toMatchObject({ minLength: 50, maxLength: 160 });
      expect(props('update_changelog_entry').status.enum).toEqual(['draft', 'review', 'published']);
      expect(props('search_content').type).toMatchObject({ enum: ['all', 'blog', 'changelog', 'roadmap'], default: 'all' });
      expect(Object.keys(props('get_asset_upload_url'))).toEqual([]);
      expect(Object.keys(props('update_blog_post')).sort()).toEqual(['content', 'description', 'slug', 'tags', 'title']);
      expect(Object.keys(props('update_roadmap_item')).sort()).toEqual(['description', 'priority', 'quarter', 'slug', 'status', 'summary', 'title']);
      expect(required('get_blog_post')).toEqual(['slug']);
      expect(required('get_changelog_entry')).toEqual(['identifier']);
      expect(required('create_changelog_entry')).toEqual(['version']);
      expect(required('search_content')).toEqual(['query']);
    });
  });

  describe('blog', () => {
    it('creates a draft, hides it from public reads, updates, publishes and lists it', async () => {
      const created = await call('create_blog_post', { title: 'Agents write posts', content: '# Hello', tags: ['agents'] });
      expect(created).toMatchObject({ slug: 'agents-write-posts', status: 'draft', author_name: 'Atrium Team', content: '# Hello' });

      expect((await refuse('get_blog_post', { slug: 'agents-write-posts' })).code).toBe('not_found');
      expect(await call('get_blog_post', { slug: 'agents-write-posts', include_drafts: true })).toMatchObject({ status: 'draft' });

      const updated = await call('update_blog_post', { slug: 'agents-write-posts', title: 'Agents write good posts', tags: ['agents', 'mcp'] });
      expect(updated).toMatchObject({ slug: 'agents-write-posts', title: 'Agents write good posts', tags: ['agents', 'mcp'], status: 'draft' });

      const published = await call('publish_blog_post', { slug: 'agents-write-posts' });
      expect(published.status).toBe('published');
      expect(published.published_at).toMatch(/Z$/);

      const post = await call('get_blog_post', { slug: 'agents-write-posts' });
      expect(post.content).toBe('# Hello');

      const page = await call('list_blog_posts', { tag: 'mcp' });
      expect(page.posts.map((p: { slug: string }) => p.slug)).toEqual(['agents-write-posts']);
      expect(page.posts[0]).not.toHaveProperty('content');
      expect(page.total).toBe(1);
    });

    it('creates a post published at once', async () => {
      const post = await call('create_blog_post', { title: 'Straight to the site', status: 'published' });
      expect(post.status).toBe('published');
      const page = await call('list_blog_posts', { limit: 100 });
      expect(page.posts.some((p: { slug: string }) => p.slug === post.slug)).toBe(true);
    });

    it('pages the published list with next_cursor', async () => {
      for (const n of [1, 2, 3]) await call('create_blog_post', { title: `Paged post ${n}`, status: 'published', tags: ['paged'] });
      const first = await call('list_blog_posts', { tag: 'paged', limit: 2 });
      expect(first.posts.map((p: { title: string }) => p.title)).toEqual(['Paged post 3', 'Paged post 2']);
      const second = await call('list_blog_posts', { tag: 'paged', limit: 2, cursor: first.next_cursor });
      expect(second.posts.map((p: { title: string }) => p.title)).toEqual(['Paged post 1']);
      expect(second.next_cursor).toBeNull();
    });

    it('deletes a draft, recording who did it', async () => {
      await call('create_blog_post', { title: 'Short lived draft' });
      expect(await call('delete_blog_post', { slug: 'short-lived-draft' })).toEqual({ slug: 'short-lived-draft', deleted: true });
      expect((await refuse('get_blog_post', { slug: 'short-lived-draft', include_drafts: true })).code).toBe('not_found');
      const log = await call('get_activity_log', { resource: 'blog', limit: 1 });
      expect(log.entries[0]).toMatchObject({ resource_id: 'short-lived-draft', action: 'deleted', actor_type: 'agent', actor_id: AGENT_NAME });
    });

    it.each(['review', 'scheduled', 'published', 'archived'])('refuses to delete a post in %s, leaving it in place', async (status) => {
      const { slug } = await call('create_blog_post', { ...READY_POST, title: `${READY_POST.title} (${status})` });
      if (status === 'review') expect((await rest('POST', `/blog/${slug}/submit`, actor)).status).toBe(200);
      if (status === 'scheduled') {
        const publishAt = new Date(Date.now() + 86_400_000).toISOString();
        expect((await rest('POST', `/blog/${slug}/schedule`, { ...actor, publish_at: publishAt })).status).toBe(200);
      }
      if (status === 'published' || status === 'archived') await call('publish_blog_post', { slug });
      if (status === 'archived') expect((await rest('POST', `/blog/${slug}/archive`, actor)).status).toBe(200);

      const error = await refuse('delete_blog_post', { slug });
      expect(error).toMatchObject({ code: 'invalid_state', details: { status } });
      expect(error.message).toContain(status);
      expect(await call('get_blog_post', { slug, include_drafts: true })).toMatchObject({ status });
    });

    it('refuses an unknown slug with not_found on every blog tool', async () => {
      for (const name of ['get_blog_post', 'update_blog_post', 'publish_blog_post', 'delete_blog_post']) {
        const args = name === 'update_blog_post' ? { slug: 'nope', title: 'New title' } : { slug: 'nope' };
        expect((await refuse(name, args)).code, name).toBe('not_found');
      }
    });

    it('refuses a description outside 50 to 160 characters, naming it, and creates nothing', async () => {
      const before = await count('blog_posts');
      const error = await refuse('create_blog_post', { title: 'Too short a description', description: 'short' });
      expect(error).toMatchObject({ code: 'invalid_request', details: { issues: [{ field: 'description' }] } });
      expect(await count('blog_posts')).toBe(before);
    });

    it('refuses arguments spec 4.3 does not give the tool (REST-only og_image_url, unknown keys)', async () => {
      const error = await refuse('create_blog_post', { title: 'With an image', og_image_url: 'https://example.com/a.png' });
      expect(error.code).toBe('invalid_request');
      expect(error.message).toContain('og_image_url');
    });

    it('refuses an update with nothing to change', async () => {
      await call('create_blog_post', { title: 'Nothing to change here' });
      expect((await refuse('update_blog_post', { slug: 'nothing-to-change-here' })).code).toBe('invalid_request');
    });
  });

  describe('changelog', () => {
    it('creates an entry with its defaults and finds it by slug or version', async () => {
      const entry = await call('create_changelog_entry', { version: 'v1.0.0', highlights: ['First release'] });
      expect(entry).toMatchObject({ slug: 'v1-0-0', version: 'v1.0.0', title: 'Release v1.0.0', type: 'release', status: 'draft' });
      expect(await call('get_changelog_entry', { identifier: 'v1.0.0' })).toMatchObject({ slug: 'v1-0-0', status: 'draft' });
      expect(await call('get_changelog_entry', { identifier: 'v1-0-0' })).toMatchObject({ version: 'v1.0.0' });
    });

    it('moves draft → review → published through update, and refuses draft → published without writing anything', async () => {
      await call('create_changelog_entry', { version: 'v1.1.0', content: 'Fixes and features.' });

      const refused = await refuse('update_changelog_entry', { identifier: 'v1.1.0', title: 'Renamed', status: 'published' });
      expect(refused).toMatchObject({ code: 'invalid_state', details: { status: 'draft' } });
      expect(await call('get_changelog_entry', { identifier: 'v1.1.0' })).toMatchObject({ status: 'draft', title: 'Release v1.1.0' });

      const review = await call('update_changelog_entry', { identifier: 'v1.1.0', summary: 'Small release', status: 'review' });
      expect(review).toMatchObject({ status: 'review', summary: 'Small release' });
      const published = await call('update_changelog_entry', { identifier: 'v1.1.0', status: 'published' });
      expect(published.status).toBe('published');

      const list = await call('list_changelog_entries', {});
      expect(list.entries.map((e: { version: string }) => e.version)).toContain('v1.1.0');
      expect(list.entries[0]).not.toHaveProperty('content');

      const moves = await call('get_activity_log', { resource: 'changelog', limit: 2 });
      expect(moves.entries.map((e: { action: string }) => e.action)).toEqual(['published', 'status_changed']);
    });

    it('refuses moving an entry back from published to draft', async () => {
      await call('create_changelog_entry', { version: 'v1.2.0', status: 'published' });
      expect((await refuse('update_changelog_entry', { identifier: 'v1.2.0', status: 'draft' })).code).toBe('invalid_state');
    });

    it('refuses submitting an entry without content (validation_failed lists it)', async () => {
      await call('create_changelog_entry', { version: 'v1.3.0' });
      const error = await refuse('update_changelog_entry', { identifier: 'v1.3.0', status: 'review' });
      expect(error.code).toBe('validation_failed');
      expect(error.details.fields.map((f: { field: string }) => f.field)).toEqual(['content']);
    });

    it('filters the list by type', async () => {
      await call('create_changelog_entry', { version: 'v1.4.1', type: 'hotfix', status: 'published' });
      const list = await call('list_changelog_entries', { type: 'hotfix' });
      expect(list.entries.map((e: { version: string }) => e.version)).toEqual(['v1.4.1']);
    });

    it('deletes a draft and refuses entries in review or published', async () => {
      await call('create_changelog_entry', { version: 'v2.0.0' });
      expect(await call('delete_changelog_entry', { identifier: 'v2.0.0' })).toMatchObject({ version: 'v2.0.0', deleted: true });
      expect((await refuse('get_changelog_entry', { identifier: 'v2.0.0' })).code).toBe('not_found');

      await call('create_changelog_entry', { version: 'v2.1.0', content: 'Notes' });
      await call('update_changelog_entry', { identifier: 'v2.1.0', status: 'review' });
      expect(await refuse('delete_changelog_entry', { identifier: 'v2.1.0' })).toMatchObject({ code: 'invalid_state', details: { status: 'review' } });
      await call('update_changelog_entry', { identifier: 'v2.1.0', status: 'published' });
      expect(await refuse('delete_changelog_entry', { identifier: 'v2.1.0' })).toMatchObject({ code: 'invalid_state', details: { status: 'published' } });
      expect((await call('get_changelog_entry', { identifier: 'v2.1.0' })).status).toBe('published');
    });

    it('refuses a version that already has an entry, and a malformed version', async () => {
      expect(await refuse('create_changelog_entry', { version: 'v1.0.0' })).toMatchObject({ code: 'conflict', details: { field: 'version' } });
      const error = await refuse('create_changelog_entry', { version: '1.0' });
      expect(error).toMatchObject({ code: 'invalid_request', details: { issues: [{ field: 'version' }] } });
    });
  });

  describe('roadmap', () => {
    it('creates items and lists them in priority order with a count per status', async () => {
      await call('create_roadmap_item', { title: 'Low thing', priority: 'low' });
      await call('create_roadmap_item', { title: 'Critical thing', priority: 'critical', category: 'api', status: 'in_progress' });
      await call('create_roadmap_item', { title: 'High thing', priority: 'high', quarter: 'Q3 2026' });
      const list = await call('list_roadmap_items', {});
      expect(list.items.map((item: { title: string }) => item.title)).toEqual(['Critical thing', 'High thing', 'Low thing']);
      expect(list.by_status).toMatchObject({ planned: 2, in_progress: 1, shipped: 0 });
      expect(list.total).toBe(3);

      const filtered = await call('list_roadmap_items', { status: 'planned', category: 'api' });
      expect(filtered.items).toEqual([]);
      expect((await call('list_roadmap_items', { category: 'api' })).items.map((i: { slug: string }) => i.slug)).toEqual(['critical-thing']);
    });

    it('gets and updates an item; shipping records shipped_at', async () => {
      expect(await call('get_roadmap_item', { slug: 'high-thing' })).toMatchObject({ priority: 'high', quarter: 'Q3 2026', status: 'planned' });
      const shipped = await call('update_roadmap_item', { slug: 'high-thing', status: 'shipped', summary: 'Done' });
      expect(shipped).toMatchObject({ status: 'shipped', summary: 'Done' });
      expect(shipped.shipped_at).toMatch(/Z$/);
    });

    it('refuses to delete a shipped item, keeping it and its votes', async () => {
      expect((await content.request('POST', '/roadmap/high-thing/vote', { json: { voter_id: 'reader-1' } })).status).toBe(200);
      const error = await refuse('delete_roadmap_item', { slug: 'high-thing' });
      expect(error).toMatchObject({ code: 'invalid_state', details: { status: 'shipped' } });
      expect((await call('get_roadmap_item', { slug: 'high-thing' })).votes).toBe(1);
      expect(await count('roadmap_votes')).toBe(1);
    });

    it('deletes an item that is not shipped, with its votes', async () => {
      for (const voter of ['reader-1', 'reader-2']) await content.request('POST', '/roadmap/low-thing/vote', { json: { voter_id: voter } });
      expect(await count('roadmap_votes')).toBe(3);
      expect(await call('delete_roadmap_item', { slug: 'low-thing' })).toEqual({ slug: 'low-thing', deleted: true });
      expect((await refuse('get_roadmap_item', { slug: 'low-thing' })).code).toBe('not_found');
      expect(await count('roadmap_votes')).toBe(1);
    });

    it('sees items hidden from the public roadmap', async () => {
      expect((await rest('POST', '/roadmap', { ...actor, title: 'Secret plan', public: false })).status).toBe(201);
      expect((await content.request('GET', '/roadmap/secret-plan')).status).toBe(404);
      expect(await call('get_roadmap_item', { slug: 'secret-plan' })).toMatchObject({ public: false });
    });

    it('refuses a malformed quarter and the REST-only public flag', async () => {
      expect((await refuse('create_roadmap_item', { title: 'When?', quarter: 'next year' })).details.issues[0].field).toBe('quarter');
      expect((await refuse('create_roadmap_item', { title: 'Hidden', public: false })).code).toBe('invalid_request');
    });
  });

  describe('search, assets and activity', () => {
    it('finds content of every type, grouped by type', async () => {
      await call('create_blog_post', { title: 'Zebra crossing news', status: 'published' });
      await call('create_changelog_entry', { version: 'v3.0.0', summary: 'The zebra release' });
      await call('create_roadmap_item', { title: 'Zebra mode' });
      const { results } = await call('search_content', { query: 'ZEBRA' });
      expect(Object.keys(results).sort()).toEqual(['blog', 'changelog', 'roadmap']);
      expect(results.blog.map((r: { slug: string }) => r.slug)).toEqual(['zebra-crossing-news']);
      expect(results.changelog.map((r: { slug: string }) => r.slug)).toEqual(['v3-0-0']);
      expect(results.roadmap.map((r: { slug: string }) => r.slug)).toEqual(['zebra-mode']);
      expect(results.blog[0]).toMatchObject({ type: 'blog', title: 'Zebra crossing news' });

      const onlyRoadmap = await call('search_content', { query: 'zebra', type: 'roadmap', limit: 1 });
      expect(onlyRoadmap.results.blog).toEqual([]);
      expect(onlyRoadmap.results.roadmap).toHaveLength(1);
    });

    it('describes the asset upload', async () => {
      const upload = await call('get_asset_upload_url');
      expect(upload).toMatchObject({
        upload_url: `${content.config.publicUrl}/assets/upload`,
        method: 'POST',
        accepted_types: ['image/png', 'image/jpeg', 'image/webp'],
        max_bytes: 5 * 1024 * 1024,
        public_url_base: `${content.config.publicUrl}/assets/`,
      });
      expect(Object.keys(upload.fields).sort()).toEqual(['actor_id', 'actor_type', 'file', 'slug', 'type']);
      expect(upload.fields.type).toContain('inline or og');
    });

    it('reads the activity log newest first, filtered by resource, as the agent of the session', async () => {
      const other = await connectClient(content.url, 'other-agent');
      try {
        await callOk(other.client, 'create_roadmap_item', { title: 'Logged by another agent' });
      } finally {
        await other.close();
      }
      const log = await call('get_activity_log', { limit: 3 });
      expect(log.entries).toHaveLength(3);
      expect(log.entries[0]).toMatchObject({ resource: 'roadmap', resource_id: 'logged-by-another-agent', actor_id: 'other-agent', actor_type: 'agent' });
      const times = log.entries.map((e: { created_at: string }) => e.created_at);
      expect([...times].sort().reverse()).toEqual(times);

      const blogOnly = await call('get_activity_log', { resource: 'blog', limit: 200 });
      expect(blogOnly.entries.every((e: { resource: string }) => e.resource === 'blog')).toBe(true);
    });
  });

  describe('argument errors', () => {
    it.each(['list_blog_posts', 'list_changelog_entries', 'list_roadmap_items'])('refuses %s with limit 101, naming limit', async (name) => {
      const error = await refuse(name, { limit: 101 });
      expect(error).toMatchObject({ code: 'invalid_request', details: { issues: [{ field: 'limit' }] } });
      expect(error.message).toContain('limit');
    });

    it('refuses search limit 51 and activity limit 201', async () => {
      expect((await refuse('search_content', { query: 'x', limit: 51 })).details.issues[0].field).toBe('limit');
      expect((await refuse('get_activity_log', { limit: 201 })).details.issues[0].field).toBe('limit');
      expect(await call('get_activity_log', { limit: 200 })).toHaveProperty('entries');
    });

    it('refuses a missing required argument, naming it', async () => {
      expect((await refuse('get_blog_post', {})).details.issues[0].field).toBe('slug');
      expect((await refuse('search_content', {})).details.issues[0].field).toBe('query');
    });

    it('answers an unknown tool with a JSON-RPC invalid-params error', async () => {
      await expect(mcp.client.callTool({ name: 'drop_database', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    });
  });

  async function count(table: string): Promise<number> {
    const [row] = await content.service.ctx.database.rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)}`);
    return row.n;
  }
});
