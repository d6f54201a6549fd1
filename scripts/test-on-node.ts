/**
 * `npm run test:node -- 24 [vitest arguments]`: the whole suite (or the files named) on another major version of
 * Node, fetched once from the npm registry (lib/node-binary.ts). The binary's folder leads PATH, so every `node`,
 * `npx` and `npm` the tests spawn runs on it too. `.ci/run` runs the suite this way on Node 24 after `npm test`.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBinary } from './lib/node-binary.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [majorText, ...vitestArgs] = process.argv.slice(2);
const major = Number(majorText);
if (!Number.isInteger(major) || major < 20) {
  console.error('usage: npm run test:node -- MAJOR [vitest arguments], for example 24');
  process.exit(2);
}

const node = await nodeBinary(major, path.join(repoRoot, '.cache'));
const child = spawn(node, [path.join(repoRoot, 'node_modules/vitest/vitest.mjs'), 'run', ...vitestArgs], {
  cwd: repoRoot,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` },
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
