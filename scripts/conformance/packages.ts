/**
 * The conformance suite is installed on demand into `.cache/`, not as a devDependency: it targets Node 22 and
 * pulls packages (content-type@3, cookie@2) whose `engines` say so, which would make every plain `npm install`
 * on Node 20 warn EBADENGINE. It runs under the Node 22 of lib/node-binary.ts anyway. Versions are pinned here.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * One version for both: the 0.2 line is the first with an `authorization` command and with server scenarios per
 * revision (`--spec-version`, and `--requirements 2026-07-28` at that revision's wire); the 0.1 line has neither.
 */
const SUITES = {
  server: '@modelcontextprotocol/conformance@0.2.0-alpha.12',
  authorization: '@modelcontextprotocol/conformance@0.2.0-alpha.12',
} as const;

/** The suite's CLI entry point, installing the pinned version into `.cache/conformance-packages/` on first use. */
export async function conformanceCli(cacheRoot: string, suite: keyof typeof SUITES): Promise<string> {
  const spec = SUITES[suite];
  const prefix = path.join(cacheRoot, 'conformance-packages', spec.replace(/[@/]/g, '_'));
  const cli = path.join(prefix, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  if (existsSync(cli)) return cli;
  console.log(`conformance: installing ${spec} into ${prefix}`);
  await mkdir(prefix, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // The suite runs under Node 22, so the engine warnings of its dependencies do not apply here.
  execFileSync(npm, ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', spec], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (!existsSync(cli)) throw new Error(`npm install ${spec} did not provide ${cli}`);
  return cli;
}
