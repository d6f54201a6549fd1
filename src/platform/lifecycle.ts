/**
 * Graceful shutdown: on SIGTERM or SIGINT every running service stops accepting connections, finishes
 * its in-flight requests, closes its database, and the process exits 0.
 */
export interface Closable {
  close(): Promise<void>;
}

export function closeOnSignals(services: Closable[], log: (message: string) => void): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log(`${signal} received, draining in-flight requests`);
    const results = await Promise.allSettled(services.map((service) => service.close()));
    const failed = results.filter((result) => result.status === 'rejected');
    for (const failure of failed) log(`shutdown error: ${(failure as PromiseRejectedResult).reason}`);
    process.exit(failed.length ? 1 : 0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
