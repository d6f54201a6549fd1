/**
 * Content MCP sessions belong to the secret they were opened under: after CONTENT_API_SECRET is changed
 * (rotated after a leak), a session opened with the old secret is over, even presented with the new one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContent, TEST_SECRET } from '../../helpers/content.js';
import { engines, testDatabase, type TestDatabase } from '../../helpers/databases.js';
import { openSession, post, sessionHeaders } from '../../helpers/content-mcp-client.js';

const NEW_SECRET = 'rotated-secret-0123456789abcdef';
const ping = { jsonrpc: '2.0', id: 7, method: 'ping' };

describe.each(engines)('content MCP sessions across a secret change on %s', (engine) => {
  let dir: string;
  let database: TestDatabase;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-secret-'));
    // One database both services use in turn (a file, for the embedded engine, so it outlives the first).
    database = engine === 'pglite' ? { config: { dataDir: path.join(dir, 'content'), schema: 'content' }, drop: async () => {} } : testDatabase(engine);
  });
  afterAll(async () => {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('ends a session opened under the old secret once the secret is changed', { timeout: 120_000 }, async () => {
    const before = await startContent(engine, { database });
    const session = await openSession(before.url);
    expect((await post(before.url, ping, sessionHeaders(session))).status).toBe(200);
    await before.close();

    // The same secret after a restart keeps the session…
    const same = await startContent(engine, { database });
    expect((await post(same.url, ping, sessionHeaders(session))).status).toBe(200);
    await same.close();

    // …a new one does not, whichever secret the client presents.
    const after = await startContent(engine, { database, config: { apiSecret: NEW_SECRET } });
    try {
      const withNew = await post(after.url, ping, { ...sessionHeaders(session), authorization: `Bearer ${NEW_SECRET}` });
      expect(withNew.status).toBe(404);
      const withOld = await post(after.url, ping, { ...sessionHeaders(session), authorization: `Bearer ${TEST_SECRET}` });
      expect(withOld.status).toBe(401);
    } finally {
      await after.close();
    }
  });
});
