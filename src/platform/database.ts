/**
 * One query path on two engines (DESIGN section 7): the embedded PGlite by default, PostgreSQL through
 * `pg` when a URL is configured. Both get the same drizzle schema and the same migration set; each service
 * lives in its own PostgreSQL schema, selected through `search_path` so queries stay unqualified.
 *
 * Transactions go only through `db.transaction()`: on PGlite a raw `BEGIN` would let a concurrent query
 * join the transaction and be rolled back with it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import v8 from 'node:v8';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { sql, type SQL } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { PgTransaction, type PgDatabase, type PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { createOwnerOnlyFiles, tightenTree } from './data-dir.js';
import { lockDatabaseDirectory, type DatabaseLock } from './database-lock.js';
import { PreparingClient } from './prepared-writes.js';

export type Db = PgDatabase<PgQueryResultHKT>;
/** Inside `db.transaction(async (tx) => …)`; accepted wherever a `Db` is. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type Queryable = Db | Tx;

/**
 * A hot statement, prepared once per database: named, so PostgreSQL parses and plans it once per connection
 * (node-postgres keeps each name per client; PGlite runs it as any statement) and drizzle builds its SQL once.
 * `build` makes it with `sql.placeholder`s for what changes per call. Inside a transaction it is built and run
 * there as any other statement (a prepared one runs on the pool, outside the transaction).
 */
export function hotStatement<Values extends Record<string, unknown>, Result>(
  name: string,
  build: (db: Queryable) => { prepare(name: string): { execute(values: Values): Promise<Result> }; execute(values: Values): Promise<Result> },
): (db: Queryable, values: Values) => Promise<Result> {
  const prepared = new WeakMap<Db, { execute(values: Values): Promise<Result> }>();
  return (db, values) => {
    if (db instanceof PgTransaction) return build(db).execute(values);
    let statement = prepared.get(db);
    if (!statement) prepared.set(db, (statement = build(db).prepare(name)));
    return statement.execute(values);
  };
}

export interface Database {
  db: Db;
  engine: 'pglite' | 'postgres';
  schema: string;
  /** Rows of a raw SQL statement, the same shape on both engines. */
  rows<T extends Record<string, unknown>>(query: ReturnType<typeof sql>): Promise<T[]>;
  /**
   * LISTENs on `channel` (an unquoted lower-case identifier) on a connection of its own: PGlite's in-process
   * listener, or a dedicated `pg.Client`. `lost` is called at most once, after this resolved, when that
   * connection fails; listen again to carry on. Used by the change feed (changes.ts).
   */
  listen(channel: string, handlers: ListenHandlers): Promise<Listening>;
  /**
   * Routine maintenance the engine does not do by itself: PGlite runs no autovacuum, so without a periodic
   * VACUUM ANALYZE its planner statistics go stale and counts cannot use index-only scans. PostgreSQL's
   * autovacuum does this already; there it does nothing.
   */
  maintain(): Promise<void>;
  /** The connections this process holds (for /metrics): PGlite is one in-process connection. */
  pool(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

export interface ListenHandlers {
  notify(payload: string): void;
  lost(error: Error): void;
}

export interface Listening {
  /**
   * Resolves once every notification committed before the call has been handed to `notify`: a round trip on the
   * listening connection (see `listenPostgres`). Rejects, after reporting `lost`, when that connection fails.
   */
  caughtUp(): Promise<void>;
  close(): Promise<void>;
}

export const migrationsFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../drizzle');

/** All Atrium processes on one PostgreSQL database serialize their migrations on this lock. */
const MIGRATION_LOCK = 7_406_127_301;

/** The rows a raw statement returns, on either engine (both drivers answer `{ rows }`). */
export async function queryRows<Row>(db: Queryable, query: SQL): Promise<Row[]> {
  return ((await db.execute(query)) as unknown as { rows: Row[] }).rows;
}

/**
 * Runs `work` in `db` when it is a transaction already, else in a new one: for writes that must commit together
 * (a change and its audit entry) whichever the caller hands in, without a savepoint when it is a transaction.
 */
export function inTransaction<T>(db: Queryable, work: (tx: Tx) => Promise<T>): Promise<T> {
  return db instanceof PgTransaction ? work(db as Tx) : db.transaction(work);
}

export interface OpenOptions {
  poolSize?: number;
  /** Where an idle connection's error is told (the server ended it: a restart, a failover); default nowhere. */
  log?: { warn(data: object, message: string): void };
}

export async function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Promise<Database> {
  assertSchemaName(config.schema);
  return config.url ? openPostgres(config, options) : openPglite(config);
}

/** How long `/health` waits for the database before saying it does not answer. */
const PING_TIMEOUT_MS = 2000;

/** True when the database answers `SELECT 1` within two seconds: `/health` answers promptly even when it hangs. */
export async function ping(db: Queryable): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
  });
  const answered = db.execute(sql`SELECT 1`).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([answered, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** DATABASE_*_TIMEOUT_SECONDS' defaults, for configs built by hand (tests, commands). */
const DEFAULT_TIMEOUTS: Required<DatabaseConfig>['timeouts'] = { connectSeconds: 5, statementSeconds: 20, idleInTransactionSeconds: 30 };

/**
 * PostgreSQL's defaults (128 MB of shared buffers, among others) are sized for a dedicated server; the embedded
 * database serves one small process, and WebAssembly memory, once grown, is never returned. PGlite's allocator
 * zero-fills the shared memory segment, so every megabyte of shared buffers is resident from the first start on,
 * in each of the two databases (8 MB rather than 16: 16 MB less idle memory, issue 22). The page cache of the
 * operating system still holds the data files.
 */
export const EMBEDDED_SETTINGS = ['shared_buffers=8MB', 'temp_buffers=4MB', 'work_mem=4MB', 'maintenance_work_mem=16MB'];

/**
 * Creates the new embedded data directories among `configs` ahead of opening them (nothing to do for PostgreSQL,
 * memory or an existing directory), so `serve` prepares both services' directories at once.
 */
export async function prepareDatabases(configs: readonly DatabaseConfig[]): Promise<void> {
  const fresh = configs.filter((config) => !config.url && !config.dataDir.startsWith('memory://') && !existsSync(path.join(config.dataDir, 'PG_VERSION')));
  if (fresh.length === 0) return;
  // The child inherits the owner-only umask; what PGlite sets wider itself is tightened once it is done.
  createOwnerOnlyFiles();
  await prepareEmbeddedDatabases(fresh);
  for (const config of fresh) await tightenTree(config.dataDir);
}

async function openPglite(config: DatabaseConfig): Promise<Database> {
  const inMemory = config.dataDir.startsWith('memory://');
  let lock: DatabaseLock | undefined;
  if (!inMemory) {
    // Owner-only from the first file PGlite writes (data-dir.ts; the umask reaches the preparing child too),
    // and one process per directory.
    createOwnerOnlyFiles();
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
    lock = await lockDatabaseDirectory(config.dataDir);
  }
  try {
    await prepareDatabases([config]);
    const client = await openPgliteClient(config);
    if (!inMemory) await tightenTree(config.dataDir);
    const db = await migrateEmbedded(client, config);
    return embeddedDatabase(client, db, config, lock);
  } catch (error) {
    await lock?.release();
    throw error;
  }
}

function embeddedDatabase(client: PGlite, db: Db, config: DatabaseConfig, lock: DatabaseLock | undefined): Database {
  return {
    db,
    engine: 'pglite',
    schema: config.schema,
    rows: (query) => queryRows(db, query),
    // One in-process connection: notifications arrive as its transactions commit, and it is never lost. It
    // serves one process, which hears its own changes as it commits them (changes.ts), so it is always caught up.
    async listen(channel, handlers) {
      const unlisten = await client.listen(channel, handlers.notify);
      return { caughtUp: async () => {}, close: () => unlisten() };
    },
    maintain: async () => void (await client.exec('VACUUM ANALYZE')),
    pool: () => ({ total: 1, idle: 1, waiting: 0 }),
    async close() {
      await client.close();
      await lock?.release();
    },
  };
}

/**
 * V8 runs WebAssembly compiled by its baseline compiler and compiles a function again with its optimizing one once
 * the function has run enough (dynamic tiering, budgeted in roughly the bytes of code it has executed). Opening the
 * embedded database runs a great deal of PostgreSQL exactly once (startup, catalog loading, recovery); at V8's
 * default budget (1,800,000) much of it gets optimized, some 50 MB of optimized code an idle service keeps for
 * code it will not run again (`npm run measure:memory`, issue 22). A hundredfold budget optimizes only what keeps
 * running: queries under load still reach it within their first few hundred calls (bench:content and bench:org on
 * PGlite, measured with and without it in bench/RESULTS.md).
 */
const WASM_TIERING_BUDGET = 180_000_000;

/** Opens (or, for a new directory, initializes) the embedded database, sized for a small service. */
export async function openPgliteClient(config: DatabaseConfig): Promise<PGlite> {
  const inMemory = config.dataDir.startsWith('memory://');
  if (!inMemory) await mkdir(config.dataDir, { recursive: true });
  // Read when a WebAssembly module is compiled, so it must be set before the first database opens.
  v8.setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
  const startFrom = inMemory && config.startFrom ? { loadDataDir: config.startFrom } : {};
  return PGlite.create(inMemory ? undefined : config.dataDir, { extensions: { pg_trgm }, postgresqlconf: EMBEDDED_SETTINGS, ...startFrom });
}

/** Loads pg_trgm, selects the service's schema and applies pending migrations. */
export async function migrateEmbedded(client: PGlite, config: DatabaseConfig): Promise<Db> {
  // pg_trgm is loaded on every open; the extension's objects live in public, next to our schema on the path.
  await client.exec(`
    CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
    CREATE SCHEMA IF NOT EXISTS "${config.schema}";
    SET search_path TO "${config.schema}", public;
    SET TimeZone TO 'UTC';
  `);
  const db = drizzlePglite({ client }) as unknown as Db;
  await migratePglite(db as never, { migrationsFolder, migrationsSchema: config.schema });
  return db;
}

/**
 * Creating a data directory (initdb, then every migration) grows the WebAssembly heap to ~800 MB, which a process
 * never gives back; a child process does it and exits, and the serving process only reopens the result.
 * One child prepares every new directory (prepare-embedded-database.ts): initdb is most of a first start.
 */
async function prepareEmbeddedDatabases(configs: readonly DatabaseConfig[]): Promise<void> {
  const targets = configs.flatMap((config) => [config.dataDir, config.schema]);
  const child = spawn(process.execPath, [...prepareCommand(), ...targets], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', resolve);
  });
  const where = configs.map((config) => config.dataDir).join(' and ');
  if (code !== 0) throw new Error(`could not create the embedded database in ${where}: ${stderr.trim() || `exit code ${code}`}`);
}

/**
 * The child runs this module's sibling as this module runs: compiled (dist/, what `npm start` runs; bin/compiled.js)
 * on plain Node, or the TypeScript source through tsx's loader.
 */
function prepareCommand(): string[] {
  if (import.meta.url.endsWith('.js')) return [fileURLToPath(new URL('./prepare-embedded-database.js', import.meta.url))];
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', tsx, fileURLToPath(new URL('./prepare-embedded-database.ts', import.meta.url))];
}

async function openPostgres(config: DatabaseConfig, options: OpenOptions): Promise<Database> {
  const { schema } = config;
  const url = config.url!;
  await migratePostgres(url, schema);
  const timeouts = config.timeouts ?? DEFAULT_TIMEOUTS;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // Repeated writes are parsed and planned once per connection (prepared-writes.ts).
    Client: PreparingClient,
    // JIT off: every statement here is a short read or write, and a server that JIT-compiles one the planner
    // costs high (search's skipped whole-table part, say) spends 25–35 ms compiling a query that runs in 5.
    options: `-c search_path="${schema}",public -c TimeZone=UTC -c jit=off`,
    // A database that cannot be reached or hangs must not hang every request (issue 16 item 5): connecting,
    // each statement (the server's limit, and the client's should the server itself hang) and an idle
    // transaction are bounded; such a request answers 503 (database-outage.ts).
    connectionTimeoutMillis: timeouts.connectSeconds * 1000,
    statement_timeout: timeouts.statementSeconds * 1000,
    query_timeout: timeouts.statementSeconds * 1000 + 1000,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionSeconds * 1000,
    keepAlive: true,
  });
  // An idle connection the server ended (a restart, a failover) is an 'error' event on the pool: without a
  // listener it would end the process. The pool drops that connection and opens another when next needed.
  // pg-pool hangs the whole client on the error (`err.client`): the log gets what the server said, not that.
  pool.on('error', (error: Error & { code?: string }) =>
    options.log?.warn({ err: { message: error.message, code: error.code } }, 'a database connection was lost; the pool replaces it'),
  );
  // The pool listens only to the connections it holds idle. One handed out but between statements (inside a
  // transaction, say) when the server ends it would raise its 'error' event with no listener: an uncaught
  // exception, thrown before the connection reports its end, so the pool would count it forever and `close()`
  // never finish. Every connection gets a listener for its whole life: the statement in flight, or the next one,
  // fails on its own, and the pool drops the connection when it comes back unusable.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = drizzlePg({ client: pool }) as unknown as Db;
  return {
    db,
    engine: 'postgres',
    schema,
    rows: (query) => queryRows(db, query),
    listen: (channel, handlers) => listenPostgres(url, schema, channel, handlers),
    maintain: async () => {},
    pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => pool.end(),
  };
}

/** How often an idle LISTEN connection proves it is alive, and how long it may take to answer. */
const LISTEN_HEARTBEAT_MS = 10_000;
const LISTEN_TIMEOUT_MS = 5_000;

/**
 * A dedicated connection outside the pool, since LISTEN belongs to a session. A connection that dies
 * silently (a half-open TCP connection after a network failure) would hear nothing without saying so, so it
 * runs a heartbeat query and counts a late answer as lost.
 */
async function listenPostgres(url: string, schema: string, channel: string, handlers: ListenHandlers): Promise<Listening> {
  const client = new pg.Client({
    connectionString: url,
    keepAlive: true,
    query_timeout: LISTEN_TIMEOUT_MS,
    connectionTimeoutMillis: LISTEN_TIMEOUT_MS,
    application_name: `atrium-changes:${schema}`,
  });
  let state: 'connecting' | 'open' | 'closed' = 'connecting';
  let heartbeat: NodeJS.Timeout | undefined;
  const fail = (error: Error) => {
    if (state !== 'open') return;
    state = 'closed';
    clearInterval(heartbeat);
    client.end().catch(() => {});
    handlers.lost(error);
  };
  client.on('error', fail);
  client.on('end', () => fail(new Error('the LISTEN connection ended')));
  client.on('notification', (message) => {
    if (message.channel === channel) handlers.notify(message.payload ?? '');
  });
  try {
    await client.connect();
    await client.query(`LISTEN "${channel}"`);
  } catch (error) {
    state = 'closed';
    await client.end().catch(() => {});
    throw error;
  }
  state = 'open';
  heartbeat = setInterval(() => client.query('SELECT 1').catch(fail), LISTEN_HEARTBEAT_MS);
  heartbeat.unref();
  const fence = coalescedFence(() => client.query('SELECT 1').then(() => undefined, (error: Error) => (fail(error), Promise.reject(error))));
  return {
    caughtUp: fence,
    async close() {
      if (state === 'closed') return;
      state = 'closed';
      clearInterval(heartbeat);
      await client.end().catch(() => {});
    },
  };
}

/**
 * "Caught up" on a LISTEN connection is one round trip on it. A committing transaction signals every backend
 * listening in its database before its COMMIT is answered (PostgreSQL's async.c, SignalBackends), and a backend
 * sends the notifications it was signalled for before the ReadyForQuery of the next statement it runs
 * (postgres.c: "if any notifies were received during the just-finished transaction, they'll be seen by the
 * client before ReadyForQuery is"). node-postgres emits each notification as it parses it, so by the time a
 * `SELECT 1` sent after that commit resolves, its notification has been handed on.
 *
 * Callers share round trips: whoever asks while one is on its way waits for the next one, which all of them
 * share (the one on its way may have been sent before their reason to ask committed). So at most two are
 * outstanding, however many requests ask.
 */
function coalescedFence(roundTrip: () => Promise<void>): () => Promise<void> {
  let sent: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const send = (): Promise<void> => {
    const trip = roundTrip();
    sent = trip;
    void trip.finally(() => {
      if (sent === trip) sent = undefined;
    }).catch(() => {});
    return trip;
  };
  return () => {
    if (next) return next;
    if (!sent) return send();
    const following = sent.catch(() => {}).then(() => {
      if (next === following) next = undefined;
      return send();
    });
    next = following;
    return following;
  };
}

/**
 * Migrations run under a session advisory lock so that several processes starting at once on one empty
 * database take turns instead of colliding on `CREATE TABLE`.
 */
async function migratePostgres(url: string, schema: string): Promise<void> {
  // A server that never answers (a firewalled host) fails the start after a while instead of hanging it.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 15_000, options: `-c search_path="${schema}",public -c TimeZone=UTC` });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public');
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await migratePg(drizzlePg({ client }), { migrationsFolder, migrationsSchema: schema });
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    await client.end();
  }
}

/** Schema names are interpolated into SQL, so only plain identifiers are allowed. */
function assertSchemaName(schema: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid database schema name: ${schema}`);
}

/** Drops a schema and everything in it; used by tests to clean up after themselves. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  assertSchemaName(schema);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** The PostgreSQL error (code, constraint) behind an error, looking through drizzle's wrapping. */
export function databaseError(error: unknown): { code?: string; constraint?: string } | undefined {
  for (let cause = error; cause && typeof cause === 'object'; cause = (cause as { cause?: unknown }).cause) {
    if (typeof (cause as { code?: unknown }).code === 'string') return cause as { code?: string; constraint?: string };
  }
  return undefined;
}
