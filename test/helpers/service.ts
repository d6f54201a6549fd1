/**
 * What starting any service in a test takes (content.ts, org.ts): a fresh database unless one is shared, a
 * temporary data directory, and a port known before the service is built, so its public URL is part of its
 * configuration from the start, as in a deployment. `close()` undoes all of it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { testDatabase, type Engine, type TestDatabase } from './databases.js';
import { freePort } from './free-port.js';

export interface Service {
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** What the service is built from: the parts every service configuration shares. */
export interface ServicePlace {
  host: string;
  port: number;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  dataDir: string;
  database: TestDatabase;
}

export interface StartedService<S extends Service> {
  url: string;
  service: S;
  close(): Promise<void>;
}

export async function startService<S extends Service>(
  engine: Engine,
  /** `inProcess`: the service is built but never listens; its tests call it through Fastify's `inject`. */
  options: { prefix: string; database?: TestDatabase; inProcess?: boolean },
  build: (place: ServicePlace) => Promise<S>,
): Promise<StartedService<S>> {
  const database = options.database ?? testDatabase(engine);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `atrium-${options.prefix}-`));
  const host = '127.0.0.1';
  let service: S;
  let url: string;
  // The port is part of the configuration, so it is chosen before the service is built, and another process can
  // take it meanwhile (free-port.ts). CI saw that twice, in the suites that start a second service on the database
  // of a first, without a cause found: the service is then built again on another port — a restart, as deployed.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(host);
    service = await build({ host, port, url: `http://${host}:${port}`, dataDir, database });
    if (options.inProcess) {
      url = `http://${host}:${port}`;
      break;
    }
    try {
      url = await service.listen();
      break;
    } catch (error) {
      await service.close();
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 3) throw error;
    }
  }
  return {
    url,
    service,
    async close() {
      await service.close();
      if (!options.database) await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
