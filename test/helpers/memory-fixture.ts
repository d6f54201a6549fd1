/**
 * An organization for the memory and assistant tests: the owner in `general` and `ops`, Bea in `general` and
 * `secret` (where the owner is not), and Nomad in no space at all.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { Engine } from './databases.js';
import { OWNER, startOrg, type StartOrgOptions, type TestOrg } from './org.js';

export const BEA = { email: 'bea@example.com', password: 'bea-password-123', name: 'Bea' } as const;
export const NOMAD = { email: 'nomad@example.com', password: 'nomad-password-1' } as const;

export interface MemoryOrg {
  org: TestOrg;
  spaces: { general: string; ops: string; secret: string };
  close(): Promise<void>;
}

export async function startMemoryOrg(engine: Engine, options: StartOrgOptions = {}): Promise<MemoryOrg> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-memory-'));
  const orgFile = path.join(dir, 'org.yaml');
  await writeFile(
    orgFile,
    `organization: { name: Memory Co }
people:
  - { email: ${BEA.email}, name: ${BEA.name}, role: member, password_env: BEA_PASSWORD }
  - { email: ${NOMAD.email}, name: Nomad, role: member, password_env: NOMAD_PASSWORD }
spaces:
  - { key: general, name: General, members: [${OWNER.email}, ${BEA.email}] }
  - { key: ops, name: Operations, members: [${OWNER.email}] }
  - { key: secret, name: Secret, members: [${BEA.email}] }
`,
  );
  process.env.BEA_PASSWORD = BEA.password;
  process.env.NOMAD_PASSWORD = NOMAD.password;
  const org = await startOrg(engine, { ...options, config: { orgFile, ...options.config } });
  const rows = await org.service.database.rows<{ id: string; key: string }>(sql`SELECT id, key FROM spaces`);
  const byKey = Object.fromEntries(rows.map((row) => [row.key, row.id]));
  return {
    org,
    spaces: { general: byKey.general, ops: byKey.ops, secret: byKey.secret },
    close: () => org.close(),
  };
}

/** Everything a memory write could change, to show that a refused call wrote nothing. */
export async function memoryFingerprint(org: TestOrg): Promise<string> {
  const [items] = await org.service.database.rows<{ value: string }>(
    sql`SELECT count(*) || ':' || coalesce(md5(string_agg(id || status || coalesce(superseded_by, ''), ',' ORDER BY id)), '') AS value FROM memory_items`,
  );
  const [keys] = await org.service.database.rows<{ value: string }>(sql`SELECT count(*)::text AS value FROM idempotency_keys`);
  const [operations] = await org.service.database.rows<{ value: string }>(sql`SELECT count(*)::text AS value FROM operations`);
  return `${items.value} keys:${keys.value} operations:${operations.value}`;
}
