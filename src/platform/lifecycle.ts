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

/** One part of a service's shutdown, named for the log. */
export interface ShutdownStep {
  name: string;
  run: () => unknown;
  /** How long it may take before the rest go on without it; default 10 s. */
  patienceMs?: number;
  /** What to log about the part should it not finish in time (a pool's connections, say). */
  state?: () => object;
}

interface ShutdownLog {
  error(details: object, message: string): void;
}

/**
 * Runs a service's shutdown steps in order, each given its patience: a step that fails or has not finished by
 * then is logged as an error by name, with its state, and the rest go on. A shutdown always finishes, and
 * whatever held it up says what it was, instead of the process (or a test's teardown) waiting on it forever.
 */
export async function closeInOrder(log: ShutdownLog, steps: readonly ShutdownStep[]): Promise<void> {
  for (const step of steps) {
    const patienceMs = step.patienceMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      Promise.resolve()
        .then(step.run)
        .then(
          () => 'done' as const,
          (error: unknown) => (log.error({ err: error, step: step.name }, `shutdown: ${step.name} failed; going on`), 'failed' as const),
        ),
      new Promise<'late'>((resolve) => (timer = setTimeout(resolve, patienceMs, 'late'))),
    ]);
    clearTimeout(timer);
    if (outcome === 'late') log.error({ step: step.name, patienceMs, ...step.state?.() }, `shutdown: ${step.name} has not finished; going on without it`);
  }
}
