/**
 * The conformance suite needs Node 22 (it imports `fs.globSync`) while Atrium runs on Node 20 and later. When the
 * running Node is older, a Node 22 binary is fetched once from the npm registry package `node-<platform>-<arch>@22`
 * (the official binary, packaged for npm) into `.cache/` — never a project dependency, which would break
 * installs on other platforms.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const MAJOR = 22;

/** A Node executable of version 22 or later: the running one if it is new enough, else the cached download. */
export async function node22(cacheRoot: string): Promise<string> {
  if (Number(process.versions.node.split('.')[0]) >= MAJOR) return process.execPath;
  const pkg = `node-${process.platform}-${process.arch}`;
  const binary = path.join(cacheRoot, `${pkg}-${MAJOR}`, process.platform === 'win32' ? 'node.exe' : 'node');
  if (existsSync(binary)) return binary;

  console.log(`conformance: Node ${process.versions.node} lacks fs.globSync; fetching ${pkg}@${MAJOR} from the npm registry`);
  const work = await mkdtemp(path.join(os.tmpdir(), 'atrium-node22-'));
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    execFileSync(npm, ['pack', `${pkg}@${MAJOR}`, '--silent', '--pack-destination', work], { stdio: ['ignore', 'ignore', 'inherit'] });
    const [tarball] = (await readdir(work)).filter((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${pkg}@${MAJOR} produced no tarball`);
    const inside = process.platform === 'win32' ? 'package/bin/node.exe' : 'package/bin/node';
    execFileSync('tar', ['-xzf', path.join(work, tarball), '-C', work, inside]);
    await mkdir(path.dirname(binary), { recursive: true });
    await rename(path.join(work, inside), binary);
    await chmod(binary, 0o755);
    console.log(`conformance: using ${execFileSync(binary, ['--version']).toString().trim()} at ${binary}`);
    return binary;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
