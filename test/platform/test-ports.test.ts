/**
 * The test harness's ports (test/helpers/free-port.ts, service.ts): a service's port is chosen before it is
 * built, below the kernel's ephemeral range, and a service whose port was taken in the meantime is built again
 * on another one instead of failing its whole suite.
 */
import http, { type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { startService } from '../helpers/service.js';

const listenOn = (server: Server, port: number) =>
  new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('test ports', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map(closeServer));
  });

  it('picks a free port below the ephemeral range', async () => {
    const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const port = await freePort();
    expect(port).toBeLessThan(ephemeralStart);
    expect(port).toBeGreaterThanOrEqual(1_024);
    const server = http.createServer();
    servers.push(server);
    await listenOn(server, port);
  });

  it('builds the service again on another port when its port was taken before it listened', async () => {
    const built: number[] = [];
    const started = await startService('pglite', { prefix: 'ports' }, async ({ port }) => {
      built.push(port);
      const server = http.createServer((_request, response) => response.end(String(port)));
      if (built.length === 1) {
        // Someone else takes the port between the choice and the listen.
        const thief = http.createServer();
        servers.push(thief);
        await listenOn(thief, port);
      }
      return {
        listen: async () => (await listenOn(server, port), `http://127.0.0.1:${port}`),
        close: () => closeServer(server),
      };
    });
    try {
      expect(built).toHaveLength(2);
      expect(built[1]).not.toBe(built[0]);
      expect(started.url).toBe(`http://127.0.0.1:${built[1]}`);
      expect(await (await fetch(started.url)).text()).toBe(String(built[1]));
    } finally {
      await started.close();
    }
  });
});
