/**
 * What the org benchmarks share: authorization codes made in the server process as consent would make them,
 * their exchange form, an initialized org MCP session, and the statuses column of a result table.
 */
import { createHash } from 'node:crypto';
import { approveAuthorizationRequest, startAuthorization } from '../../src/auth/authorization.js';
import { mcpResource } from '../../src/auth/resource.js';
import type { DatabaseConfig, OrgConfig } from '../../src/config.js';
import type { OrgContext } from '../../src/org/context.js';
import type { LoadResult } from './load.js';

export const REDIRECT_URI = 'http://127.0.0.1/callback';
/** One PKCE pair for every prepared code: the server still hashes and compares it on each exchange. */
export const CODE_VERIFIER = 'bench-code-verifier-0123456789-abcdefghijklmnopqrstuvwxyz';
const CODE_CHALLENGE = createHash('sha256').update(CODE_VERIFIER).digest('base64url');

export type Engine = 'pglite' | 'postgres';

/**
 * The engines of `--engines` that can run: PostgreSQL needs BENCH_DATABASE_URL or TEST_DATABASE_URL (said
 * when missing).
 */
export function benchEngines(list: string): { engines: Engine[]; postgresUrl: string | undefined } {
  const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const requested = list.split(',') as Engine[];
  if (requested.includes('postgres') && !postgresUrl) console.warn('PostgreSQL skipped: set BENCH_DATABASE_URL or TEST_DATABASE_URL');
  return { engines: requested.filter((engine) => engine === 'pglite' || (engine === 'postgres' && postgresUrl)), postgresUrl };
}

/** The org service's configuration in a benchmark child: port 0 (the public URLs are set once it listens). */
export function benchOrgConfig(database: DatabaseConfig, dataDir: string, extra: Partial<OrgConfig> = {}): OrgConfig {
  return {
    host: '127.0.0.1',
    port: 0,
    publicUrl: 'http://127.0.0.1',
    authPublicUrl: 'http://127.0.0.1',
    database,
    dataDir,
    admin: { email: 'owner@example.com', password: 'bench-owner-password' },
    cimdAllowLoopback: false,
    llm: {},
    // As deployed: structured lines at `info`, none per request (the parent sends them to a file).
    logLevel: 'info',
    ...extra,
  };
}

/** An authorization code for `clientId`, approved for the person as the consent page would. */
export async function prepareCode(ctx: OrgContext, config: OrgConfig, clientId: string, personId: string, scope: string): Promise<string> {
  const { location } = await startAuthorization(ctx, {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: CODE_CHALLENGE,
    code_challenge_method: 'S256',
    resource: mcpResource(config),
    scope,
    state: 'bench',
  });
  const id = new URL(location, config.publicUrl).searchParams.get('request');
  if (!id) throw new Error(`authorization request refused: ${location}`);
  return new URL(await approveAuthorizationRequest(ctx, id, personId)).searchParams.get('code')!;
}

export function exchangeForm(clientId: string, config: { publicUrl: string }, code: string): URLSearchParams {
  return new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    code_verifier: CODE_VERIFIER,
    resource: `${config.publicUrl}/mcp`,
  });
}

/** initialize + notifications/initialized; returns the headers each tools/call carries. */
export async function openOrgSession(url: string, accessToken: string, clientName: string): Promise<Record<string, string>> {
  const base = {
    authorization: `Bearer ${accessToken}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
  };
  const init = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: base,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: clientName, version: '1.0.0' } },
    }),
  });
  const session = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !session) throw new Error(`initialize failed: ${init.status} ${await init.text()}`);
  await init.text();
  const headers = { ...base, 'mcp-session-id': session };
  await (await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  return headers;
}

/** A `tools/call` that must answer 200 with `expected` in its body before a case is measured. */
export async function probeTool(url: string, headers: Record<string, string>, body: string, expected: string): Promise<void> {
  const response = await fetch(`${url}/mcp`, { method: 'POST', headers, body });
  const text = await response.text();
  if (response.status !== 200 || !text.includes(expected)) throw new Error(`probe failed: ${response.status} ${text}`);
}

/** The statuses column: every status with its count, and transport errors. */
export function statusText(result: LoadResult): string {
  return (
    Object.entries(result.statuses)
      .map(([code, count]) => `${code}×${count.toLocaleString('en-US')}`)
      .join(' ') + (result.errors + result.timeouts > 0 ? ` errors×${result.errors + result.timeouts}` : '')
  );
}
