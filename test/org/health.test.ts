import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';

describe.each(engines)('org health on %s', (engine) => {
  let org: TestOrg;
  beforeAll(async () => {
    org = await startOrg(engine);
  });
  afterAll(() => org.close());

  it('answers ok with the service name and MCP path', async () => {
    const response = await org.request('GET', '/health');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ok: true, service: 'atrium-org', mcp: '/mcp' });
  });
});
