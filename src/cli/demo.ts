/**
 * `atrium demo`: example content for a first look, created through the content REST API of a running service
 * (as any client would): a published post, a release note and three roadmap items, among them `dark-mode`,
 * which the README's vote example uses. What already exists (409) is left as it is.
 */
import type { ContentConfig } from '../config.js';
import { loadOrCreateSecret } from '../platform/secrets.js';
import { UsageError } from './errors.js';

const actor = { actor_id: 'demo', actor_type: 'system' };

const EXAMPLES: Array<{ path: string; body: Record<string, unknown>; name: string }> = [
  {
    path: '/blog',
    name: 'blog post welcome-to-atrium',
    body: {
      title: 'Welcome to Atrium',
      slug: 'welcome-to-atrium',
      description: 'What the content service does, and where to read more about its REST API and its MCP server.',
      content: 'Atrium serves a blog, a changelog and a public roadmap with votes. People write through the REST API; agents through the content MCP server at /mcp. The API reference is at /docs.',
      tags: ['announcement'],
      status: 'published',
    },
  },
  {
    path: '/changelog',
    name: 'changelog entry v1.0.0',
    body: { version: 'v1.0.0', title: 'First release', summary: 'Blog, changelog, roadmap and search.', status: 'published' },
  },
  { path: '/roadmap', name: 'roadmap item dark-mode', body: { slug: 'dark-mode', title: 'Dark mode', category: 'product', priority: 'high' } },
  { path: '/roadmap', name: 'roadmap item webhooks', body: { slug: 'webhooks', title: 'Webhooks for new posts', category: 'integrations' } },
  { path: '/roadmap', name: 'roadmap item search-filters', body: { slug: 'search-filters', title: 'Search filters', category: 'product', status: 'considering' } },
];

export async function runDemo(config: ContentConfig): Promise<void> {
  const secret = config.apiSecret ?? (await loadOrCreateSecret(config.dataDir, 'content-api-secret')).value;
  for (const example of EXAMPLES) {
    const response = await fetch(`${config.publicUrl}${example.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...example.body, ...actor }),
    }).catch(() => {
      throw new UsageError(`the content service does not answer at ${config.publicUrl}; start it first (npm start)`);
    });
    if (response.status === 201) console.log(`created ${example.name}`);
    else if (response.status === 409) console.log(`kept ${example.name} (already there)`);
    else throw new UsageError(`${example.name}: ${response.status} ${await response.text()}`);
  }
  console.log(`demo content is in place: ${config.publicUrl}/blog, ${config.publicUrl}/roadmap`);
}
