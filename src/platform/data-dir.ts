/**
 * The data directory holds what nobody else on the machine may read or change (DESIGN section 1): the
 * embedded databases (password hashes, the cookie and CSRF keys, token hashes), generated secrets and
 * uploads. Everything in it is owner-only: new files through the process's umask, set before the embedded
 * database creates any; what PGlite sets wider itself while it opens (its unpacked initial database is
 * 0666, its relation caches 0644) is tightened as soon as it has opened (database.ts); and a directory left
 * readable by an older version or another tool is tightened at start, with a warning.
 */
import { chmod, lstat, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';

/** Group and others get nothing. */
const NOT_OWNER = 0o077;

interface Warner {
  warn(data: Record<string, unknown>, message: string): void;
}

/**
 * Makes this process create owner-only files from now on. Worker threads cannot change the umask; there
 * the tightening at start still applies.
 */
export function createOwnerOnlyFiles(): void {
  try {
    process.umask(process.umask() | NOT_OWNER);
  } catch {
    // ERR_WORKER_UNSUPPORTED_OPERATION
  }
}

/** Creates the data directory owner-only, or tightens an existing one and everything under it. */
export async function secureDataDir(dataDir: string, log: Warner): Promise<void> {
  createOwnerOnlyFiles();
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const tightened = await tightenTree(dataDir);
  if (tightened.length > 0) {
    log.warn(
      { dataDir, count: tightened.length, examples: tightened.slice(0, 5) },
      `${dataDir}: ${tightened.length} files and directories were open to other users; made them owner-only`,
    );
  }
}

/** Removes group and other permissions from a directory and everything in it; returns what it changed. */
export async function tightenTree(root: string): Promise<string[]> {
  const tightened: string[] = [];
  const visit = async (entry: string): Promise<void> => {
    const info = await lstat(entry).catch(() => null);
    // A symlink's own mode means nothing, and what it points to may not be ours to change.
    if (!info || info.isSymbolicLink()) return;
    if (info.mode & NOT_OWNER) {
      await chmod(entry, info.mode & 0o7700);
      tightened.push(path.relative(root, entry) || '.');
    }
    if (info.isDirectory()) {
      for (const name of await readdir(entry)) await visit(path.join(entry, name));
    }
  };
  await visit(root);
  return tightened;
}
