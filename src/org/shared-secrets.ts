/**
 * Secrets every process of the org service must agree on (the key that signs cookies and CSRF tokens).
 * They live in the database rather than the data dir because several processes behind a load balancer
 * may each have their own disk (DESIGN section 6). The first process to ask creates it.
 */
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Queryable } from '../platform/database.js';
import { orgSecrets } from './schema.js';

export async function loadSharedSecret(db: Queryable, name: string): Promise<string> {
  await db.insert(orgSecrets).values({ name, value: randomBytes(32).toString('base64url') }).onConflictDoNothing();
  const [row] = await db.select({ value: orgSecrets.value }).from(orgSecrets).where(eq(orgSecrets.name, name));
  return row.value;
}
