/**
 * Run as a child process by database.ts: `node --import tsx prepare-embedded-database.ts DATA_DIR SCHEMA
 * [DATA_DIR SCHEMA …]` creates each embedded database and applies its migrations, then exits, taking the memory
 * initdb needed with it. initdb runs once, in the first directory: its new cluster is copied to the others
 * before any of them gets its schema (a second initdb costs as much again, some 4 s of CPU on a small machine).
 */
import { copyNewCluster, migrateEmbedded, openPgliteClient } from './database.js';

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
