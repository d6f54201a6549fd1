/**
 * Node binaries of other major versions, fetched once from the npm registry package `node-<platform>-<arch>@MAJOR`
 * (the official binary, packaged for npm) into `.cache/` — never a project dependency, which would break installs on
 * other platforms. The conformance suite needs Node 22 or later (it imports `fs.globSync`); `npm run test:node -- 24`
 * runs the whole suite on Node 24.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const runningMajor = Number(process.versions.node.split('.')[0]);

/** A Node executable of exactly `major` (or, with `orLater`, of `major` or later): the running one if it fits, else the cached download. */
export async function nodeBinary(major: number, cacheRoot: string, { orLater = false } = {}): Promise<string> {
  if (runningMajor === major || (orLater && runningMajor > major)) return process.execPath;
  const pkg = `node-${process.platform}-${process.arch}`;
  // bin/ holds only `node`, so it can lead PATH and make every `node` a test spawns this one.
  const binary = path.join(cacheRoot, `${pkg}-${major}`, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');
  if (existsSync(binary)) return binary;

  console.log(`fetching ${pkg}@${major} from the npm registry (Node ${process.versions.node} is running)`);
  const work = await mkdtemp(path.join(os.tmpdir(), `atrium-node${major}-`));
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    execFileSync(npm, ['pack', `${pkg}@${major}`, '--silent', '--pack-destination', work], { stdio: ['ignore', 'ignore', 'inherit'] });
    const [tarball] = (await readdir(work)).filter((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${pkg}@${major} produced no tarball`);
    const inside = process.platform === 'win32' ? 'package/bin/node.exe' : 'package/bin/node';
    execFileSync('tar', ['-xzf', path.join(work, tarball), '-C', work, inside]);
    await mkdir(path.dirname(binary), { recursive: true });
    await rename(path.join(work, inside), binary);
    await chmod(binary, 0o755);
    console.log(`using ${execFileSync(binary, ['--version']).toString().trim()} at ${binary}`);
    return binary;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
