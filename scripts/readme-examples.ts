/**
 * `npm run test:readme` (and test/readme.test.ts, so `npm test` runs it): every shell example of README.md, in
 * order, against a freshly started `npm start` on an empty data directory, as a newcomer would paste them.
 *
 * - Fenced ```sh and ```bash blocks run, one after the other, in one working directory (a fresh project-like
 *   folder whose `npx atrium` is this checkout); variables exported by one block are seen by the next.
 * - A comment on the line before a block changes what happens to it:
 *   `<!-- example: file NAME -->` saves the block as NAME (the README says "save this as NAME");
 *   `<!-- example: services stopped -->` stops the services for that block and starts them again after;
 *   `<!-- example: skip REASON -->` does not run it (the harness itself is what it describes).
 * - The services listen on 8080 and 8081 as in the README; when those are taken, on free ports, and the
 *   examples' `localhost:8080` / `localhost:8081` are rewritten to them.
 * Any block that exits non-zero (the examples use `curl -fsS`, so an HTTP error is an error) fails the run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitForHealth } from './lib/processes.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface Example {
  /** 1-based line of the opening fence in README.md. */
  line: number;
  language: string;
  code: string;
  directive?: { kind: 'file' | 'services stopped' | 'skip'; argument: string };
}

export function extractExamples(markdown: string): Example[] {
  const examples: Example[] = [];
  const fence = /^```([\w-]*)[^\n]*\n([\s\S]*?)^```\s*$/gm;
  for (const match of markdown.matchAll(fence)) {
    const before = markdown.slice(0, match.index).trimEnd();
    const comment = before.slice(before.lastIndexOf('\n') + 1).match(/^<!-- example: (file|services stopped|skip)\s*(.*?)\s*-->$/);
    examples.push({
      line: before.split('\n').length + (markdown.slice(0, match.index).endsWith('\n\n') ? 2 : 1),
      language: match[1],
      code: match[2],
      directive: comment ? { kind: comment[1] as 'file' | 'services stopped' | 'skip', argument: comment[2] } : undefined,
    });
  }
  return examples;
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A folder that looks like a project with Atrium installed: `npx atrium` and its dependencies resolve. */
async function prepareWorkDir(): Promise<string> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'atrium-readme-'));
  const modules = path.join(work, 'node_modules');
  await mkdir(path.join(modules, '.bin'), { recursive: true });
  for (const entry of await readdir(path.join(repoRoot, 'node_modules'))) {
    if (entry !== '.bin') await symlink(path.join(repoRoot, 'node_modules', entry), path.join(modules, entry));
  }
  for (const entry of await readdir(path.join(repoRoot, 'node_modules', '.bin'))) {
    await symlink(path.join(repoRoot, 'node_modules', '.bin', entry), path.join(modules, '.bin', entry));
  }
  await symlink(repoRoot, path.join(modules, 'atrium'));
  await symlink('../atrium/bin/atrium.js', path.join(modules, '.bin', 'atrium'));
  return work;
}

interface Services {
  child: ChildProcess;
  output: string[];
}

/** What `npm start` runs, in the work folder, so `./data` is the work folder's. */
async function startServices(work: string, env: NodeJS.ProcessEnv, ports: { org: number; content: number }): Promise<Services> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'atrium.js'), 'serve'], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout!.on('data', (chunk) => output.push(String(chunk)));
  child.stderr!.on('data', (chunk) => output.push(String(chunk)));
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output.join('')}`))));
  await Promise.race([
    Promise.all([waitForHealth(`http://127.0.0.1:${ports.org}/health`, 180_000), waitForHealth(`http://127.0.0.1:${ports.content}/health`, 180_000)]),
    exited,
  ]).catch(async (error: Error) => {
    child.kill('SIGTERM');
    throw new Error(`${error.message}\n${output.join('')}`);
  });
  exited.catch(() => {});
  return { child, output };
}

async function stopServices(services: Services): Promise<void> {
  if (services.child.exitCode !== null) return;
  const exited = new Promise((resolve) => services.child.once('exit', resolve));
  services.child.kill('SIGTERM');
  await exited;
}

export async function runReadmeExamples(log: (line: string) => void = console.log): Promise<void> {
  const examples = extractExamples(await readFile(path.join(repoRoot, 'README.md'), 'utf8'));
  const defaults = (await portIsFree(8080)) && (await portIsFree(8081));
  const ports = defaults ? { org: 8080, content: 8081 } : { org: await freePort(), content: await freePort() };
  const work = await prepareWorkDir();
  const state = path.join(work, '.example-env');
  // The newcomer's environment, less anything that would point Atrium elsewhere than its defaults.
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(ATRIUM_|CONTENT_|ORG_|AUTH_|DATABASE_URL|LOG_|METRICS_|HOST$|npm_)/.test(name)),
  );
  Object.assign(env, { ORG_PORT: String(ports.org), CONTENT_PORT: String(ports.content), LOG_FORMAT: 'json', LOG_LEVEL: 'warn' });
  const rewrite = (code: string) => code.replaceAll('localhost:8080', `localhost:${ports.org}`).replaceAll('localhost:8081', `localhost:${ports.content}`);

  let services = await startServices(work, env, ports);
  try {
    await writeFile(state, '');
    for (const example of examples) {
      const where = `README.md:${example.line}`;
      if (example.directive?.kind === 'file') {
        await writeFile(path.join(work, example.directive.argument), rewrite(example.code));
        log(`${where} saved as ${example.directive.argument}`);
        continue;
      }
      if (!['sh', 'bash'].includes(example.language)) continue;
      if (example.directive?.kind === 'skip') {
        log(`${where} not run: ${example.directive.argument}`);
        continue;
      }
      const stopped = example.directive?.kind === 'services stopped';
      if (stopped) await stopServices(services);
      const script = `set -eo pipefail\nsource ${JSON.stringify(state)}\n${rewrite(example.code)}\nexport -p > ${JSON.stringify(state)}\n`;
      const result = spawnSync('bash', ['-c', script], { cwd: work, env, encoding: 'utf8', timeout: 120_000 });
      if (result.status !== 0) {
        throw new Error(`${where}: the example exited with ${result.status ?? result.signal}\n--- example ---\n${example.code}--- output ---\n${result.stdout}${result.stderr}`);
      }
      log(`${where} ok (${example.code.split('\n').filter((line) => line.trim() && !line.trim().startsWith('#')).length} lines)`);
      if (stopped) services = await startServices(work, env, ports);
    }
  } finally {
    await stopServices(services);
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  runReadmeExamples().then(
    () => console.log('every README example ran'),
    (error: Error) => {
      console.error(error.message);
      process.exit(1);
    },
  );
}
