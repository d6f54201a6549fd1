/**
 * A content service in a child process: `startContentServer(...)` in the parent forks this file, which
 * creates the real service (src/content/service.ts) on the given database, loads the benchmark data through
 * the service's own database handle when asked to (`seed`), and listens on port 0.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ContentConfig, DatabaseConfig } from '../../src/config.js';
import { createContentService } from '../../src/content/service.js';
import { withLoadingDatabase } from './loading-database.js';
import { serveChild, startChild, type ChildServer, type StartChildOptions } from './child.js';
import { seedContent, type SeedFacts, type SeedOptions } from './content-seed.js';
import { seedPosts, type PostSeedFacts } from './post-seed.js';

export const BENCH_SECRET = 'bench-secret-0123456789abcdef';

export interface ContentServerOptions {
  database: DatabaseConfig;
  /** Data directory of the service (assets, generated files). */
  dataDir: string;
  /** Load the benchmark data first; without it the service serves the database as it finds it. */
  seed?: SeedOptions;
  /** Instead of `seed`: this many bare blog posts, loaded in bulk (post-seed.ts). */
  bulkPosts?: number;
  /** `false` starts the service with both read caches off (ContentServiceOptions.readCaches). Default true. */
  readCaches?: boolean;
}

export function startContentServer(options: ContentServerOptions, startOptions?: StartChildOptions): Promise<ChildServer<SeedFacts | null>> {
  return startChild<SeedFacts | null>(fileURLToPath(import.meta.url), options, startOptions);
}

/** A content service that loads `bulkPosts` posts in bulk before it listens. */
export function startBulkContentServer(options: ContentServerOptions & { bulkPosts: number }, startOptions?: StartChildOptions): Promise<ChildServer<PostSeedFacts>> {
  return startChild<PostSeedFacts>(fileURLToPath(import.meta.url), options, startOptions);
}

if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  serveChild<ContentServerOptions, SeedFacts | PostSeedFacts | null>(async (options) => {
    const config: ContentConfig = {
      host: '127.0.0.1',
      port: 0,
      publicUrl: 'http://127.0.0.1',
      database: options.database,
      apiSecret: BENCH_SECRET,
      dataDir: options.dataDir,
      assetDir: path.join(options.dataDir, 'assets'),
      revalidate: {},
      // The vote rows measure the write path with distinct voters from one address, not the per-address limit.
      votesPerMinute: 1_000_000_000,
      // As deployed (request lines are at debug, so none per request; the parent sends the log to a file).
      logLevel: 'info',
    };
    const service = await createContentService(config, { readCaches: options.readCaches ?? true });
    const { seed, bulkPosts } = options;
    const facts =
      seed || bulkPosts
        ? await withLoadingDatabase<SeedFacts | PostSeedFacts>(config.database, service.ctx.database, (database) =>
            seed ? seedContent(database, seed) : seedPosts(database, bulkPosts!),
          )
        : null;
    const url = await service.listen();
    return { url, info: facts, close: () => service.close() };
  });
}
