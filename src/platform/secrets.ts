import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface StoredSecret {
  value: string;
  file: string;
  /** True when this call generated the secret (first start). */
  created: boolean;
}

/**
 * A secret generated on first start and kept in the data dir (mode 0600), so restarts reuse it.
 * Used when the operator has not configured one (DESIGN section 1).
 */
export async function loadOrCreateSecret(dataDir: string, name: string, generate = () => randomBytes(32).toString('base64url')): Promise<StoredSecret> {
  const file = storedSecretFile(dataDir, name);
  const stored = await readStoredSecret(dataDir, name);
  if (stored !== undefined) return { value: stored, file, created: false };
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const value = generate();
  try {
    await writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
    return { value, file, created: true };
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateSecret(dataDir, name, generate);
    throw error;
  }
}

export function storedSecretFile(dataDir: string, name: string): string {
  return path.join(dataDir, 'secrets', name);
}

/** A secret kept in the data dir, or undefined when there is none. */
export async function readStoredSecret(dataDir: string, name: string): Promise<string | undefined> {
  try {
    return (await readFile(storedSecretFile(dataDir, name), 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
