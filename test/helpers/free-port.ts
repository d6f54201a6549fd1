/**
 * A port for a server whose address must be known before it listens (a service's public URL is part of its
 * configuration; a private PostgreSQL cluster is started with its port), free when chosen and released again.
 *
 * It is picked at random below the kernel's ephemeral range (net.ipv4.ip_local_port_range), never from
 * `listen(0)`: a port from that range can be handed to any outgoing connection meanwhile — the service's own
 * connections to PostgreSQL while it starts — and then the server cannot listen on it (EADDRINUSE, seen once in
 * CI). Another test may still pick the same port in the moment between; at random among thousands that is rare,
 * and the server then fails to listen rather than answering for someone else.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [first, last] = belowEphemeralPorts();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = first + Math.floor(Math.random() * (last - first + 1));
    if (await isFree(host, port)) return port;
  }
  throw new Error(`no free port in ${first}–${last} after 50 tries`);
}

/** The 10,000 ports below the ephemeral range (32768–60999 by default on Linux, so 22768–32767). */
function belowEphemeralPorts(): [number, number] {
  let start = 32_768;
  try {
    start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || start;
  } catch {
    // Not Linux: the IANA dynamic range starts at 49152, and 32768 is below it too.
  }
  return [Math.max(1_024, start - 10_000), start - 1];
}

function isFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
