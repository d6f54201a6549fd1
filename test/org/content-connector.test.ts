/**
 * The content connector end to end: a content service started without CONTENT_API_SECRET generates one in
 * the data dir; the org beside it (same data dir, no organization file) wires `publish_blog_post` (risk
 * high) on first start and reads that secret. Publishing pauses for a person and the post goes public only
 * after they approve it in the inbox.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContent, type TestContent } from '../helpers/content.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { Browserless } from '../helpers/web-client.js';

const POST = {
  title: 'Gates that ask before they publish',
  description: 'How an organization lets agents publish to its website only after a person says yes to it.',
  content: 'A long enough body. '.repeat(20),
  tags: ['governance'],
};

describe.each(engines)('the content connector on %s', (engine) => {
  let content: TestContent;
  let org: TestOrg;
  let client: OrgMcp;
  let secret: string;

  beforeAll(async () => {
    content = await startContent(engine, { config: { apiSecret: undefined } });
    secret = (await readFile(path.join(content.config.dataDir, 'secrets', 'content-api-secret'), 'utf8')).trim();
    org = await startOrg(engine, { config: { dataDir: content.config.dataDir, content: { url: content.url, beside: true } } });
    client = await connectOrgMcp(org, { scopes: ['integrations:read', 'integrations:act'] });
  });
  afterAll(async () => {
    await client?.close();
    await org?.close();
    await content?.close();
  });

  const contentRequest = (method: string, route: string, body?: unknown) =>
    fetch(content.url + route, {
      method,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('publishes a post only after a person approves, with the generated content secret', async () => {
    const created = await contentRequest('POST', '/blog', { ...POST, actor_id: 'writer', actor_type: 'human' });
    expect(created.status).toBe(201);
    const { slug } = await created.json();

    const [capability] = (await client.callOk('list_capabilities', { query: 'publish' })).capabilities;
    expect(capability).toMatchObject({
      key: 'publish_blog_post',
      risk: 'high',
      connector: { kind: 'content' },
      input_schema: { type: 'object', required: ['slug'], properties: { slug: { type: 'string' } } },
    });
    const { spaces } = await client.callOk('service_context');
    const paused = await client.callOk('execute_capability', { capability_id: capability.id, input: { slug }, space_id: spaces[0].id, wait_seconds: 10 });
    expect(paused.status).toBe('paused');
    expect((await fetch(`${content.url}/blog/${slug}`)).status).toBe(404);

    const browser = new Browserless(org.url);
    await browser.signIn(OWNER.email, OWNER.password);
    const inbox = await browser.get('/inbox');
    expect(inbox.text).toContain('publish_blog_post');
    expect(inbox.text).toContain(`&quot;slug&quot;: &quot;${slug}&quot;`);
    const approved = await browser.post('/inbox/resolve', {
      csrf: browser.hidden(inbox.text, 'csrf'),
      decision_id: browser.hidden(inbox.text, 'decision_id'),
      outcome: 'approve',
    });
    expect(approved.status).toBe(303);

    let operation = paused;
    for (let attempt = 0; attempt < 200 && ['paused', 'running', 'queued'].includes(operation.status); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      operation = await client.callOk('get_operation', { operation_id: paused.operation_id });
    }
    expect(operation).toMatchObject({ status: 'succeeded', result: { slug, status: 'published' } });
    const published = await fetch(`${content.url}/blog/${slug}`);
    expect(published.status).toBe(200);
    const activity = await (await contentRequest('GET', '/activity')).json();
    // Recorded as the acting agent: the connected client, by the name it registered with.
    expect(activity.entries.at(-1)).toMatchObject({ resource_id: expect.any(String), actor_type: 'agent', actor_id: 'Test client' });
  });
});
