/**
 * An org service in a child process for the org benchmarks: `startOrgServer(...)` in the parent forks this
 * file, which creates the real service (src/org/service.ts) on the given database with the default first
 * start (the owner and the space General), loads company memory when asked (org-seed.ts), connects a client
 * for the owner through the authorization endpoints with every scope (authorization request, consent
 * approval, code exchange over HTTP), and listens on port 0.
 */
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { approveAuthorizationRequest, startAuthorization } from '../../src/auth/authorization.js';
import { registerClient } from '../../src/auth/clients.js';
import { mcpResource } from '../../src/auth/resource.js';
import type { DatabaseConfig, OrgConfig } from '../../src/config.js';
import { createOrgService } from '../../src/org/service.js';
import { serveChild, startChild, type ChildServer, type StartChildOptions } from './child.js';
import { seedMemory, type MemorySeedFacts } from './org-seed.js';

export interface OrgServerOptions {
  database: DatabaseConfig;
  dataDir: string;
  /** Memory items to load before listening; 0 loads none. */
  memoryItems: number;
}

export interface OrgServerInfo {
  /** An access token of the owner holding every scope of spec 2.3. */
  accessToken: string;
  /** The owner's one space (General). */
  spaceId: string;
  memory: MemorySeedFacts | null;
}

const REDIRECT_URI = 'http://127.0.0.1/callback';
const CODE_VERIFIER = 'bench-org-code-verifier-0123456789-abcdefghijklmnopqrstuvwxyz';
const ALL_SCOPES = 'service:ask agents:message memory:read memory:write task:read task:write integrations:read integrations:act governance:admin';

export function startOrgServer(options: OrgServerOptions, startOptions?: StartChildOptions): Promise<ChildServer<OrgServerInfo>> {
  return startChild<OrgServerInfo>(fileURLToPath(import.meta.url), options, startOptions);
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  serveChild<OrgServerOptions, OrgServerInfo>(async (options) => {
    const config: OrgConfig = {
      host: '127.0.0.1',
      port: 0,
      publicUrl: 'http://127.0.0.1',
      authPublicUrl: 'http://127.0.0.1',
      database: options.database,
      dataDir: options.dataDir,
      admin: { email: 'owner@example.com', password: 'bench-owner-password' },
      cimdAllowLoopback: false,
      llm: {},
      // As deployed: one structured log line per request (the parent sends them to a file).
      logLevel: 'info',
    };
    const service = await createOrgService(config);
    const { ctx } = service;
    const [owner] = await ctx.database.rows<{ id: string; name: string }>(sql`SELECT id, name FROM people WHERE role = 'owner' LIMIT 1`);
    const [space] = await ctx.database.rows<{ id: string }>(sql`SELECT space_id AS id FROM space_members WHERE person_id = ${owner.id} LIMIT 1`);
    const memory = options.memoryItems > 0 ? await seedMemory(ctx.database, { count: options.memoryItems, spaceId: space.id, person: owner }) : null;
    const url = await service.listen();
    config.publicUrl = url;
    config.authPublicUrl = url;
    return { url, info: { accessToken: await ownerToken(service, url, owner.id), spaceId: space.id, memory }, close: () => service.close() };
  });
}

async function ownerToken(service: Awaited<ReturnType<typeof createOrgService>>, url: string, ownerId: string): Promise<string> {
  const { ctx } = service;
  const client = await registerClient(ctx, { client_name: 'bench-org', redirect_uris: [REDIRECT_URI] });
  const { location } = await startAuthorization(ctx, {
    response_type: 'code',
    client_id: client.id,
    redirect_uri: REDIRECT_URI,
    code_challenge: createHash('sha256').update(CODE_VERIFIER).digest('base64url'),
    code_challenge_method: 'S256',
    resource: mcpResource(ctx.config),
    scope: ALL_SCOPES,
    state: 'bench',
  });
  const request = new URL(location, url).searchParams.get('request');
  if (!request) throw new Error(`authorization request refused: ${location}`);
  // The person's Allow on the consent page.
  const code = new URL(await approveAuthorizationRequest(ctx, request, ownerId)).searchParams.get('code')!;
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    client_id: client.id,
    code_verifier: CODE_VERIFIER,
    resource: mcpResource(ctx.config),
  });
  const tokens = await fetch(`${url}/oauth/token`, { method: 'POST', body: form }).then((response) => response.json());
  if (!tokens.access_token) throw new Error(`token exchange failed: ${JSON.stringify(tokens)}`);
  return tokens.access_token;
}
