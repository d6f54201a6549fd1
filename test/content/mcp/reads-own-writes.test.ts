/**
 * The MCP read tools answer from the domain read cache (content/read-cache.ts), and an agent still always reads
 * its own writes: every write drops the cached reads of its kind when it commits, before its result is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContent, type TestContent } from '../../helpers/content.js';
import { engines } from '../../helpers/databases.js';
import { callError, callOk, connectClient, type Connected } from '../../helpers/content-mcp-client.js';

describe.each(engines)('content MCP reads its own writes on %s', (engine) => {
  let content: TestContent;
  let agent: Connected;
  beforeAll(async () => {
    content = await startContent(engine);
    agent = await connectClient(content.url);
  });
  afterAll(async () => {
    await agent?.close();
    await content?.close();
  });

  it('answers get_blog_post with the updated text right after update_blog_post', async () => {
    const { slug } = await callOk(agent.client, 'create_blog_post', { title: 'Cached and then edited', content: 'first text', status: 'published' });
    expect((await callOk(agent.client, 'get_blog_post', { slug })).content).toBe('first text');
    expect((await callOk(agent.client, 'get_blog_post', { slug })).content).toBe('first text');
    expect((await callOk(agent.client, 'list_blog_posts', {})).posts.map((post: { title: string }) => post.title)).toContain('Cached and then edited');
    expect((await callOk(agent.client, 'search_content', { query: 'Cached and then' })).results.blog).toHaveLength(1);

    await callOk(agent.client, 'update_blog_post', { slug, content: 'second text', title: 'Edited while cached' });

    expect((await callOk(agent.client, 'get_blog_post', { slug })).content).toBe('second text');
    expect((await callOk(agent.client, 'list_blog_posts', {})).posts.map((post: { title: string }) => post.title)).toContain('Edited while cached');
    expect((await callOk(agent.client, 'search_content', { query: 'Cached and then' })).results.blog).toHaveLength(0);
    expect((await callOk(agent.client, 'search_content', { query: 'Edited while' })).results.blog).toHaveLength(1);
  });

  it('stops finding a draft after it is deleted, and finds a post as soon as it is published', async () => {
    const { slug } = await callOk(agent.client, 'create_blog_post', { title: 'A draft read before it goes' });
    expect((await callOk(agent.client, 'get_blog_post', { slug, include_drafts: true })).status).toBe('draft');
    expect((await callError(agent.client, 'get_blog_post', { slug })).code).toBe('not_found');

    await callOk(agent.client, 'publish_blog_post', { slug });
    expect((await callOk(agent.client, 'get_blog_post', { slug })).status).toBe('published');

    const draft = await callOk(agent.client, 'create_blog_post', { title: 'A draft deleted while cached' });
    expect((await callOk(agent.client, 'get_blog_post', { slug: draft.slug, include_drafts: true })).status).toBe('draft');
    await callOk(agent.client, 'delete_blog_post', { slug: draft.slug });
    expect((await callError(agent.client, 'get_blog_post', { slug: draft.slug, include_drafts: true })).code).toBe('not_found');
  });

  it('shows a changelog status move and roadmap changes made in one call at once', async () => {
    const entry = await callOk(agent.client, 'create_changelog_entry', { version: 'v9.1.0', title: 'Nine one', content: 'Notes' });
    expect((await callOk(agent.client, 'get_changelog_entry', { identifier: 'v9.1.0' })).status).toBe('draft');
    await callOk(agent.client, 'update_changelog_entry', { identifier: entry.slug, status: 'review', title: 'Nine point one' });
    expect(await callOk(agent.client, 'get_changelog_entry', { identifier: 'v9.1.0' })).toMatchObject({ status: 'review', title: 'Nine point one' });

    const item = await callOk(agent.client, 'create_roadmap_item', { title: 'Cached roadmap item' });
    expect((await callOk(agent.client, 'get_roadmap_item', { slug: item.slug })).status).toBe('planned');
    const listed = await callOk(agent.client, 'list_roadmap_items', {});
    await callOk(agent.client, 'update_roadmap_item', { slug: item.slug, status: 'in_progress' });
    expect((await callOk(agent.client, 'get_roadmap_item', { slug: item.slug })).status).toBe('in_progress');
    const relisted = await callOk(agent.client, 'list_roadmap_items', {});
    expect(relisted.by_status.in_progress).toBe(listed.by_status.in_progress + 1);
  });

  it('shows a REST vote in the MCP roadmap read at once', async () => {
    const item = await callOk(agent.client, 'create_roadmap_item', { title: 'Voted on over REST' });
    expect((await callOk(agent.client, 'get_roadmap_item', { slug: item.slug })).votes).toBe(0);
    expect((await content.request('POST', `/roadmap/${item.slug}/vote`, { json: { voter_id: 'reader-9' } })).status).toBe(200);
    expect((await callOk(agent.client, 'get_roadmap_item', { slug: item.slug })).votes).toBe(1);
  });
});
