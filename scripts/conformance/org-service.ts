/**
 * A real org service for the conformance runs: ephemeral port, in-memory database, the given owner, its
 * public URLs set to where it listens.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { OrgConfig } from '../../src/config.js';
import { createOrgService, type OrgService } from '../../src/org/service.js';

export interface ConformanceOrg {
  service: OrgService;
  /** Where it listens; also its issuer and MCP origin. */
  url: string;
  close(): Promise<void>;
}

export async function startConformanceOrg(owner: { email: string; password: string }): Promise<ConformanceOrg> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-conformance-org-'));
  const config: OrgConfig = {
    host: '127.0.0.1',
    port: 0,
    publicUrl: 'http://placeholder',
    authPublicUrl: 'http://placeholder',
    database: { dataDir: 'memory://', schema: 'org' },
    dataDir,
    admin: owner,
    cimdAllowLoopback: false,
    llm: {},
    logLevel: process.env.LOG_LEVEL ?? 'warn',
  };
  const service = await createOrgService(config);
  const url = await service.listen();
  config.publicUrl = url;
  config.authPublicUrl = url;
  return {
    service,
    url,
    async close() {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
