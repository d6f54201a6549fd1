/**
 * Run as a child process by database.ts: `node --import tsx prepare-embedded-database.ts DATA_DIR SCHEMA`
 * creates the embedded database in DATA_DIR and applies the migrations, then exits, taking the memory
 * initdb needed with it.
 */
import { migrateEmbedded, openPgliteClient } from './database.js';

const [dataDir, schema] = process.argv.slice(2);
if (!dataDir || !schema) {
  console.error('usage: prepare-embedded-database.ts DATA_DIR SCHEMA');
  process.exit(2);
}
const client = await openPgliteClient({ dataDir, schema });
await migrateEmbedded(client, { dataDir, schema });
await client.close();
