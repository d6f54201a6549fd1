/**
 * Issue 21 item 7 (DESIGN 4.9): the org server and its tools present themselves — title, description, the icon
 * served from the org origin, all four annotations — to clients of 2025-11-25 and later, while a 2025-06-18
 * client gets exactly the answers it always got; and `tools/list` keeps one order, `orgTools`, on every process
 * and after a restart. Spoken with the official SDK client over the real OAuth flow.
 */
import { readFile } from 'node:fs/promises';
import { Client, StreamableHTTPClientTransport, type Tool } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMcpToolRegistry } from '../../src/platform/mcp/tools.js';
import type { McpClient } from '../../src/platform/mcp/endpoint.js';
import { ORG_ICON_PATH, ORG_ICON_PNG_PATH, orgIcons, orgServerInfo, orgToolPresentation, TOOL_PRESENTATION } from '../../src/org/mcp/presentation.js';
import { ORG_MCP_INFO, orgTools } from '../../src/org/mcp/server.js';
import { toOrgTool } from '../../src/org/mcp/tools.js';
import { engines, postgresUrl, testDatabase, type TestDatabase } from '../helpers/databases.js';
import { ALL_SCOPES } from '../helpers/org-mcp.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient } from '../helpers/oauth-flow.js';

const ORIGIN = 'https://org.example';
const clientOf = (protocolVersion: string): McpClient => ({ protocolVersion, name: 'test', version: '1.0.0', capabilities: {} });
/** The registry's own `tools/list`, as server.ts builds it. */
const registryTools = (): Tool[] =>
  buildMcpToolRegistry(orgTools.map((definition) => toOrgTool(definition)), { warn() {}, error() {} } as never).tools as Tool[];
const toolNames = orgTools.map((tool) => tool.name);

/** An SDK client speaking only `revision`: offered in initialize, or pinned for the sessionless 2026-07-28. */
async function listAs(org: TestOrg, accessToken: string, revision: string) {
  const client =
    revision === '2026-07-28'
      ? new Client({ name: 'presentation-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: revision } } })
      : new Client({ name: 'presentation-test', version: '1.0.0' }, { supportedProtocolVersions: [revision] });
  const transport = new StreamableHTTPClientTransport(new URL(`${org.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${accessToken}` } },
  });
  await client.connect(transport);
  try {
    return { serverInfo: client.getServerVersion(), tools: (await client.listTools()).tools };
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

describe('how the org server presents itself, revision by revision', () => {
  const plain = registryTools();

  it('has a title and all four hints for every org tool, in the order of orgTools', () => {
    expect(Object.keys(TOOL_PRESENTATION)).toEqual(toolNames);
  });

  it("is the README's tool presentation table, row for row", async () => {
    const readme = await readFile('README.md', 'utf8');
    const table = readme.split('<!-- tool presentation:')[1].split('<!-- end of tool presentation -->')[0];
    const yes = (hint: boolean) => (hint ? 'yes' : 'no');
    const rows = Object.entries(TOOL_PRESENTATION).map(
      ([name, { title, annotations: a }]) =>
        `| \`${name}\` | ${title} | ${yes(a.readOnlyHint)} | ${yes(a.destructiveHint)} | ${yes(a.idempotentHint)} | ${yes(a.openWorldHint)} |`,
    );
    expect(table.split('\n').filter((line) => line.startsWith('| `'))).toEqual(rows);
  });

  it('gives a 2025-06-18 client the registry list itself and the contract serverInfo, nothing added', () => {
    expect(orgToolPresentation(ORIGIN)(clientOf('2025-06-18'), plain)).toBe(plain);
    expect(orgServerInfo({ ...ORG_MCP_INFO }, ORIGIN)(clientOf('2025-06-18'))).toEqual({ name: 'atrium-org', version: '1.0.0' });
  });

  it.each(['2025-11-25', '2026-07-28'])('gives a %s client titles, the icon on the origin and four true hints per tool', (revision) => {
    const present = orgToolPresentation(ORIGIN);
    const tools = present(clientOf(revision), plain);
    // Presented once per list: the same answer object for the next request.
    expect(present(clientOf(revision), plain)).toBe(tools);
    expect(tools.map((tool) => tool.name)).toEqual(toolNames);
    for (const [index, tool] of tools.entries()) {
      // Everything the plain list says stays as it was; the presentation only adds.
      expect(tool).toMatchObject({ ...plain[index], annotations: expect.any(Object) });
      expect(tool.title, tool.name).toMatch(/^\S.{2,60}$/);
      expect(tool.icons).toEqual([
        { src: `${ORIGIN}/assets/atrium.svg`, mimeType: 'image/svg+xml', sizes: ['any'] },
        { src: `${ORIGIN}/assets/atrium.png`, mimeType: 'image/png', sizes: ['128x128'] },
      ]);
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof tool.annotations?.[hint], `${tool.name} ${hint}`).toBe('boolean');
      }
      const definition = orgTools[index];
      // A tool that changes nothing is read-only, and then never destructive and always idempotent.
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(definition.effect === 'read');
      if (definition.effect === 'read') expect(tool.annotations).toMatchObject({ destructiveHint: false, idempotentHint: true });
    }
    const hints = (name: string) => tools.find((tool) => tool.name === name)!.annotations;
    expect(hints('execute_capability')).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true });
    expect(hints('resolve_decision')).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
    expect(hints('message_agent')).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    expect(hints('get_operation')).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(orgServerInfo({ ...ORG_MCP_INFO }, ORIGIN)(clientOf(revision))).toEqual({
      name: 'atrium-org',
      version: '1.0.0',
      title: 'Atrium',
      description: expect.stringMatching(/^The organization's people and AI agents/),
      websiteUrl: ORIGIN,
      icons: orgIcons(ORIGIN),
    });
  });
});

describe.each(engines)('the org endpoint on %s', (engine) => {
  let org: TestOrg;
  let accessToken: string;
  beforeAll(async () => {
    org = await startOrg(engine);
    ({ accessToken } = await connectClient(org, { scopes: ALL_SCOPES }));
  }, 60_000);
  afterAll(() => org?.close());

  it('answers a 2025-06-18 client exactly as before: the contract serverInfo and the registry list', async () => {
    const { serverInfo, tools } = await listAs(org, accessToken, '2025-06-18');
    expect(serverInfo).toEqual({ name: 'atrium-org', version: '1.0.0' });
    expect(tools).toEqual(registryTools());
    expect(tools.some((tool) => 'title' in tool || 'icons' in tool)).toBe(false);
  });

  it.each(['2025-11-25', '2026-07-28'])('shows a %s client the title, icon and four hints of the server and every tool', async (revision) => {
    const { serverInfo, tools } = await listAs(org, accessToken, revision);
    const icons = orgIcons(org.config.publicUrl);
    expect(serverInfo).toMatchObject({ name: 'atrium-org', version: '1.0.0', title: 'Atrium', websiteUrl: org.config.publicUrl, icons });
    expect(tools.map((tool) => tool.name)).toEqual(toolNames);
    for (const tool of tools) {
      expect(tool).toMatchObject({ title: TOOL_PRESENTATION[tool.name].title, icons });
      expect(tool.annotations).toMatchObject(TOOL_PRESENTATION[tool.name].annotations);
    }
  });

  it('serves the icons it names from the org origin: the SVG and the PNG', async () => {
    const [svg, png] = orgIcons(org.config.publicUrl);
    expect(svg.src).toBe(`${org.config.publicUrl}${ORG_ICON_PATH}`);
    const vector = await fetch(svg.src);
    expect(vector.status).toBe(200);
    expect(vector.headers.get('content-type')).toBe('image/svg+xml');
    expect(await vector.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(png.src).toBe(`${org.config.publicUrl}${ORG_ICON_PNG_PATH}`);
    const raster = await fetch(png.src);
    expect(raster.status).toBe(200);
    expect(raster.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await raster.arrayBuffer());
    // The PNG signature, and a 128 × 128 image (IHDR width and height).
    expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([128, 128]);
  });
});

describe.runIf(postgresUrl)('the tools/list order across processes and restarts, on PostgreSQL', () => {
  let database: TestDatabase;
  const running: TestOrg[] = [];
  beforeAll(() => {
    database = testDatabase('postgres');
  });
  afterAll(async () => {
    await Promise.all(running.map((org) => org.close()));
    await database?.drop();
  });

  it('is the order of orgTools on two processes of one database, and again after one restarts', async () => {
    const a = await startOrg('postgres', { database });
    running.push(a);
    const sameOrigin = { publicUrl: a.url, authPublicUrl: a.url };
    const b = await startOrg('postgres', { database, config: sameOrigin });
    running.push(b);
    const { accessToken } = await connectClient(a, { scopes: ALL_SCOPES });
    const listedAt = async (org: TestOrg, revision: string) => (await listAs(org, accessToken, revision)).tools.map((tool) => tool.name);
    const names = async (org: TestOrg) => {
      const [contract, newest] = await Promise.all([listedAt(org, '2025-06-18'), listedAt(org, '2026-07-28')]);
      expect(newest).toEqual(contract);
      return contract;
    };
    expect(await names(a)).toEqual(toolNames);
    expect(await names(b)).toEqual(toolNames);
    await b.close();
    running.pop();
    const restarted = await startOrg('postgres', { database, config: sameOrigin });
    running.push(restarted);
    expect(await names(restarted)).toEqual(toolNames);
  }, 90_000);
});
