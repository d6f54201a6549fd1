/**
 * Run as a child process by database.ts: `node --import tsx prepare-embedded-database.ts DATA_DIR SCHEMA
 * [DATA_DIR SCHEMA …]` creates each embedded database and applies its migrations, then exits, taking the memory
 * initdb needed with it. initdb runs once, in the first directory: its new cluster is copied to the others
 * before any of them gets its schema (a second initdb costs as much again, some 4 s of CPU on a small machine).
 */
import { copyFile, cp } from 'node:fs/promises';
import path from 'node:path';
import { migrateEmbedded, openPgliteClient } from './database.js';

const args = process.argv.slice(2);
if (args.length === 0 || args.length % 2 !== 0) {
  console.error('usage: prepare-embedded-database.ts DATA_DIR SCHEMA [DATA_DIR SCHEMA …]');
  process.exit(2);
}
const targets = args.flatMap((dataDir, index) => (index % 2 === 0 ? [{ dataDir, schema: args[index + 1] }] : []));

const [first, ...others] = targets;
await (await openPgliteClient(first)).close();
for (const other of others) await copyNewCluster(first.dataDir, other.dataDir);
for (const target of targets) {
  const client = await openPgliteClient(target);
  await migrateEmbedded(client, target);
  await client.close();
}

/**
 * Copies a data directory fresh from initdb (closed, so consistent on disk) to `to`, its PG_VERSION last: a copy
 * cut short has none, so the next start prepares that directory again instead of opening half a cluster.
 */
async function copyNewCluster(from: string, to: string): Promise<void> {
  const version = path.join(from, 'PG_VERSION');
  await cp(from, to, { recursive: true, filter: (source) => source !== version });
  await copyFile(version, path.join(to, 'PG_VERSION'));
}
