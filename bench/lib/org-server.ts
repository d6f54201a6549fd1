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
import { secretResolver, type DatabaseConfig, type OrgConfig } from '../../src/config.js';
import { recordClientAgent } from '../../src/org/agents/records.js';
import { createOrgService } from '../../src/org/service.js';
import { serveChild, startChild, type ChildServer, type StartChildOptions } from './child.js';
import { withLoadingDatabase } from './loading-database.js';
import { seedConsole, type ConsoleSeedFacts } from './console-seed.js';
import { seedMemory, type MemorySeedFacts } from './org-seed.js';

export interface OrgServerOptions {
  database: DatabaseConfig;
  dataDir: string;
  /** Memory items to load before listening; 0 loads none. */
  memoryItems: number;
  /** An organization file to apply at start (its `secret_env` names are read from the environment). */
  orgFile?: string;
  /** The console's data to load after the memory (console-seed.ts). */
  console?: { operations: number; activity: number; tasks: number };
}

export interface OrgServerInfo {
  /** An access token of the owner holding every scope of spec 2.3. */
  accessToken: string;
  /** The owner's space (General). */
  spaceId: string;
  memory: MemorySeedFacts | null;
  console: ConsoleSeedFacts | null;
  /** The ids of the agents and capabilities the organization file declared, by key. */
  agents: Record<string, string>;
  capabilities: Record<string, string>;
}

export const BENCH_OWNER_EMAIL = 'owner@example.com';
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
      admin: { email: BENCH_OWNER_EMAIL, password: 'bench-owner-password' },
      cimdAllowLoopback: false,
      llm: {},
      // As deployed: structured lines at `info`, none per request (the parent sends them to a file).
      logLevel: 'info',
      ...(options.orgFile ? { orgFile: options.orgFile } : {}),
      resolveSecret: secretResolver(process.env),
    };
    const service = await createOrgService(config);
    const { ctx } = service;
    const [owner] = await ctx.database.rows<{ id: string; name: string }>(sql`SELECT id, name FROM people WHERE role = 'owner' LIMIT 1`);
    const [space] = await ctx.database.rows<{ id: string }>(
      sql`SELECT s.id FROM spaces s JOIN space_members m ON m.space_id = s.id WHERE m.person_id = ${owner.id} ORDER BY s.key = 'general' DESC LIMIT 1`,
    );
    const byKey = async (table: 'agents' | 'capabilities') =>
      Object.fromEntries((await ctx.database.rows<{ key: string; id: string }>(sql`SELECT key, id FROM ${sql.identifier(table)}`)).map((row) => [row.key, row.id]));
    const memory =
      options.memoryItems > 0
        ? await withLoadingDatabase(config.database, ctx.database, (database) => seedMemory(database, { count: options.memoryItems, spaceId: space.id, person: owner }))
        : null;
    const url = await service.listen();
    config.publicUrl = url;
    config.authPublicUrl = url;
    const accessToken = await ownerToken(service, url, owner.id);
    const seeded = options.console;
    const consoleFacts = seeded
      ? await withLoadingDatabase(config.database, ctx.database, async (database) =>
          seedConsole(database, {
            ...seeded,
            owner,
            spaceId: space.id,
            agentIds: (await database.rows<{ id: string }>(sql`SELECT id FROM agents ORDER BY id`)).map((row) => row.id),
          }),
        )
      : null;
    const info = { accessToken, spaceId: space.id, memory, console: consoleFacts, agents: await byKey('agents'), capabilities: await byKey('capabilities') };
    return { url, info, close: () => service.close() };
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
  // The person's Allow on the consent page, which also connects the client as their agent (src/org/web/consent.ts).
  await recordClientAgent(ctx.db, { clientId: client.id, clientName: 'bench-org', personId: ownerId });
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
