// The compiled tree `npm start` runs (issue 22 item 4). Run through tsx, the TypeScript sources cost the serving
// process some 50–70 MB more when idle: Node 20 runs tsx's module hooks on a loader thread of their own (a second
// V8 isolate holding esbuild's transform), and every transformed module keeps its source map. So `npm start`
// first compiles src/ file by file with esbuild — the same per-file transform tsx applies, nothing bundled — into
// dist/, at the same depth as src/, so every path a module takes relative to itself (../package.json,
// ../../drizzle, its assets) resolves the same. Source maps are written next to each file for
// `NODE_OPTIONS=--enable-source-maps`, and not loaded otherwise.
//
// dist/.sources holds a fingerprint of src/ (every file's path, size and modification time) taken when it was
// built; bin/atrium.js runs dist/ only while src/ still matches it, and the sources through tsx otherwise, so an
// edited source is never served stale.
//
//   node bin/compiled.js    (npm start's prestart) compiles when src/ changed since the last build
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sources = path.join(root, 'src');
const compiled = path.join(root, 'dist');
const STAMP = '.sources';

/** Every file under `dir`, as paths relative to it, in a stable order. */
function filesUnder(dir, prefix = '') {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => {
      const relative = path.join(prefix, entry.name);
      return entry.isDirectory() ? filesUnder(dir, relative) : [relative];
    });
}

/** A fingerprint of src/: each file's path, size and modification time (a few milliseconds for the whole tree). */
export function sourcesFingerprint(dir = sources) {
  const hash = createHash('sha256');
  for (const file of filesUnder(dir)) {
    const { size, mtimeMs } = statSync(path.join(dir, file));
    hash.update(`${file}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** dist/cli.js (a file URL) when dist/ was built from src/ as it is now; undefined otherwise. */
export function compiledEntry() {
  return builtFrom() === sourcesFingerprint() ? pathToFileURL(path.join(compiled, 'cli.js')).href : undefined;
}

/** The fingerprint dist/ was built from, if it was. */
function builtFrom() {
  try {
    return readFileSync(path.join(compiled, STAMP), 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Compiles src/ into dist/ unless dist/ already matches it. The new tree is written beside dist/ and swapped in
 * whole, its fingerprint last, so a process starting meanwhile finds either the old tree or the new one.
 */
export async function compile() {
  const fingerprint = sourcesFingerprint();
  if (builtFrom() === fingerprint) return false;
  const { build } = await import('esbuild');
  const partial = `${compiled}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  const files = filesUnder(sources);
  const code = files.filter((file) => /\.tsx?$/.test(file));
  await build({
    entryPoints: code.map((file) => path.join(sources, file)),
    outdir: partial,
    outbase: sources,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: path.join(root, 'tsconfig.json'),
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  // What modules read beside themselves: stylesheets, scripts and images.
  for (const file of files.filter((file) => !code.includes(file))) {
    mkdirSync(path.dirname(path.join(partial, file)), { recursive: true });
    copyFileSync(path.join(sources, file), path.join(partial, file));
  }
  writeFileSync(path.join(partial, STAMP), fingerprint);
  const previous = `${compiled}.previous-${process.pid}`;
  if (existsSync(compiled)) renameSync(compiled, previous);
  renameSync(partial, compiled);
  rmSync(previous, { recursive: true, force: true });
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  if (await compile()) console.error(`compiled src/ into dist/ in ${Math.round(performance.now() - started)} ms`);
}
