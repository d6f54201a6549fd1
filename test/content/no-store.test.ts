/**
 * Responses to the secret's holder may carry unpublished text, so no cache may store them (RFC 9111
 * §5.2.2.5): drafts, previews, all roadmap items, the activity log, authenticated MCP. Anonymous public
 * reads stay cacheable (revalidated by ETag).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actor, startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';
import { initializeMessage, post } from '../helpers/content-mcp-client.js';

describe.each(engines)('Cache-Control of authenticated content responses on %s', (engine) => {
  let content: TestContent;
  let draft: string;
  beforeAll(async () => {
    content = await startContent(engine);
    const created = await content.request('POST', '/blog', { auth: true, json: { title: 'Unannounced launch', ...actor } });
    expect(created.status).toBe(201);
    draft = created.body.slug;
  });
  afterAll(() => content.close());

  it.each(['/blog/drafts', '/changelog/drafts', '/roadmap/all', '/activity', '/blog', '/roadmap', 'the draft preview'])(
    'GET %s with the secret is no-store',
    async (route) => {
      const response = await content.request('GET', route === 'the draft preview' ? `/blog/${draft}?preview=true` : route, { auth: true });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
    },
  );

  it('keeps anonymous public reads cacheable', async () => {
    const response = await content.request('GET', '/blog');
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, no-cache');
  });

  it('answers authenticated MCP with no-store', async () => {
    const response = await post(content.url, initializeMessage());
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});
