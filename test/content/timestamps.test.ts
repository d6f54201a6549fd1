/** A record's updated_at never precedes its created_at: not at creation, not after an update in the same millisecond. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { actor, startContent, type TestContent } from '../helpers/content.js';

describe.each(engines)('content timestamps on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    content = await startContent(engine);
  });
  afterAll(() => content.close());

  it('keeps updated_at at or after created_at for posts, entries and items written and updated at once', async () => {
    const writes = Array.from({ length: 20 }, async (_, index) => {
      const post = await content.request('POST', '/blog', { auth: true, json: { title: `Post number ${index}`, ...actor } });
      const entry = await content.request('POST', '/changelog', { auth: true, json: { version: `v1.0.${index}`, ...actor } });
      const item = await content.request('POST', '/roadmap', { auth: true, json: { title: `Item number ${index}`, ...actor } });
      expect([post.status, entry.status, item.status]).toEqual([201, 201, 201]);
      const updated = await content.request('PATCH', `/blog/${post.body.slug}`, { auth: true, json: { content: 'changed', ...actor } });
      expect(updated.status).toBe(200);
      return [post.body, entry.body, item.body, updated.body];
    });
    for (const record of (await Promise.all(writes)).flat()) {
      expect(Date.parse(record.updated_at), JSON.stringify(record)).toBeGreaterThanOrEqual(Date.parse(record.created_at));
      expect(record.updated_at >= record.created_at, JSON.stringify(record)).toBe(true);
    }
  });
});
