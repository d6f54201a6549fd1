/**
 * Issue 21 item 8: the official MCP Python SDK client (`mcp` from PyPI, test/helpers/python.ts) against the
 * content server, at the newest revision it speaks (its `auto` mode: `server/discover`, so 2026-07-28) and
 * with the 2025 handshake; its writes are recorded as its client name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../helpers/databases.js';
import { startContent, TEST_SECRET, type TestContent } from '../../helpers/content.js';
import { ensurePythonSdk, PYTHON_MODES, runPythonClient } from '../../helpers/python.js';

describe.each(engines)('the Python SDK client against content MCP on %s', (engine) => {
  let content: TestContent;
  beforeAll(async () => {
    await ensurePythonSdk();
    content = await startContent(engine);
  }, 600_000);
  afterAll(() => content?.close());

  it.each(PYTHON_MODES)('in %s mode speaks %s, lists the 19 tools and writes as python-sdk-client', async (mode, revision) => {
    const title = `Roadmap item from Python ${mode}`;
    const run = await runPythonClient(`${content.url}/mcp`, TEST_SECRET, { mode, tool: 'create_roadmap_item', arguments: { title } });
    expect(run).toMatchObject({ protocol_version: revision, server: 'atrium-content', is_error: false });
    expect(run.tools).toHaveLength(19);
    const item = JSON.parse(run.text[0]);
    const activity = await content.request('GET', '/activity?limit=200', { auth: true });
    expect(activity.body.entries).toEqual(
      expect.arrayContaining([expect.objectContaining({ resource_id: item.slug, actor_id: 'python-sdk-client', actor_type: 'agent' })]),
    );
  });

  it('gets a catalogued error as an isError result', async () => {
    const run = await runPythonClient(`${content.url}/mcp`, TEST_SECRET, { tool: 'get_roadmap_item', arguments: { slug: 'no-such-item' } });
    expect(run.is_error).toBe(true);
    expect(JSON.parse(run.text[0]).error.code).toBe('not_found');
  });
});
