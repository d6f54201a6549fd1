/**
 * Bulk loading (a million rows in one INSERT … SELECT, index builds) runs far past the statement timeout a
 * service's pool sets (DATABASE_STATEMENT_TIMEOUT_SECONDS, 20 s by default). On PostgreSQL the benchmarks load
 * through a connection of their own without those limits; the embedded database has one connection, the
 * service's, and no timeouts to lift.
 */
import type { DatabaseConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/platform/database.js';

const LOADING_TIMEOUTS = { connectSeconds: 30, statementSeconds: 24 * 3600, idleInTransactionSeconds: 24 * 3600 };

export async function withLoadingDatabase<T>(config: DatabaseConfig, service: Database, load: (database: Database) => Promise<T>): Promise<T> {
  if (!config.url) return load(service);
  const loading = await openDatabase({ ...config, timeouts: LOADING_TIMEOUTS }, { poolSize: 1 });
  try {
    return await load(loading);
  } finally {
    await loading.close();
  }
}
