/**
 * The JWKS (RFC 7517) at `jwks_uri`: the current and previous signing keys (DESIGN 4.7). Tokens are
 * opaque, so nothing is signed today; the keys are published so clients that fetch the key set find a
 * well-formed one, and rotation keeps the previous key visible for whatever it signed.
 *
 * Keys live in the database, so every process publishes the same set.
 */
import { desc, sql } from 'drizzle-orm';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Queryable } from '../platform/database.js';
import { oauthSigningKeys } from './schema.js';

const ALG = 'ES256';

/** The newest two keys, creating the first on first use. */
export async function publishedKeys(db: Queryable): Promise<{ keys: JWK[] }> {
  let rows = await newestKeys(db);
  if (rows.length === 0) {
    await insertKey(db, sql`1`);
    rows = await newestKeys(db);
  }
  return { keys: rows.map((row) => row.publicJwk) };
}

/** Makes a new current key; the one before it stays published as the previous key. */
export async function rotateSigningKey(db: Queryable): Promise<void> {
  await insertKey(db, sql`(SELECT coalesce(max(generation), 0) + 1 FROM oauth_signing_keys)`);
}

function newestKeys(db: Queryable) {
  return db.select({ publicJwk: oauthSigningKeys.publicJwk }).from(oauthSigningKeys).orderBy(desc(oauthSigningKeys.generation)).limit(2);
}

/** Processes racing to create the same generation agree on whichever insert lands first. */
async function insertKey(db: Queryable, generation: ReturnType<typeof sql>): Promise<void> {
  const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  await db
    .insert(oauthSigningKeys)
    .values({
      kid,
      generation,
      alg: ALG,
      publicJwk: { ...publicJwk, kid, alg: ALG, use: 'sig' },
      privateJwk: { ...(await exportJWK(privateKey)), kid, alg: ALG },
    })
    .onConflictDoNothing({ target: oauthSigningKeys.generation });
}
