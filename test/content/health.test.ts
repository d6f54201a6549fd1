import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { startContent, type TestContent } from '../helpers/content.js';

describe.each(engines)('content health on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    content = await startContent(engine);
  });
  afterAll(() => content.close());

  it('answers ok with the service name and MCP path', async () => {
    const response = await content.request('GET', '/health');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ok: true, service: 'atrium-content', mcp: '/mcp' });
  });

  it('answers unknown routes 404 in the error shape', async () => {
    const response = await content.request('GET', '/no-such-route');
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  });
});
