/**
 * `npm run test:readme` (and test/readme.test.ts, so `npm test` runs it): every shell example of README.md, in
 * order, against a freshly started `npm start` on an empty data directory, as a newcomer would paste them.
 *
 * - Fenced ```sh and ```bash blocks run, one after the other, in one working directory (a fresh project-like
 *   folder whose `npx atrium` is this checkout and whose `examples/` are this checkout's); variables exported by
 *   one block are seen by the next, and by the services when they start again (the README exports the services'
 *   secrets in their terminal).
 * - A comment on the line before a block changes what happens to it:
 *   `<!-- example: file NAME -->` saves the block as NAME (the README says "save this as NAME");
 *   `<!-- example: services stopped -->` stops the services for that block and starts them again after;
 *   `<!-- example: background -->` starts it and goes on once it printed its first line (a server the README
 *   runs in another terminal); it is stopped when the run ends;
 *   `<!-- example: person EMAIL $VARIABLE -->` runs it while a person, signed in as EMAIL with the password an
 *   earlier block exported as VARIABLE, does in a real browser what the block's output asks of them
 *   (scripts/lib/readme-person.ts: Allow on the consent page, Answer and Approve on the inbox);
 *   `<!-- example: skip REASON -->` does not run it (the harness itself is what it describes).
 * - The README's ports (8080 org, 8081 content, 9100 the example agent, 8976 the OAuth redirect) are used when
 *   free; when one is taken, a free port stands in for it and the examples' mentions of it are rewritten. The
 *   test suite asks for free ports throughout (`ports: 'free'`), as every test does.
 * Any block that exits non-zero (the examples use `curl -fsS`, so an HTTP error is an error), or whose person
 * could not do what it asked, fails the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import readline from 'node:readline';
import { freePort, waitForHealth } from './lib/processes.js';
import { readmePerson, type ReadmePerson } from './lib/readme-person.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface Example {
  /** 1-based line of the opening fence in README.md. */
  line: number;
  language: string;
  code: string;
  directive?: { kind: DirectiveKind; argument: string };
}

type DirectiveKind = 'file' | 'services stopped' | 'background' | 'person' | 'skip';

export function extractExamples(markdown: string): Example[] {
  const examples: Example[] = [];
  const fence = /^```([\w-]*)[^\n]*\n([\s\S]*?)^```\s*$/gm;
  for (const match of markdown.matchAll(fence)) {
    const before = markdown.slice(0, match.index).trimEnd();
    const comment = before.slice(before.lastIndexOf('\n') + 1).match(/^<!-- example: (file|services stopped|background|person|skip)\s*(.*?)\s*-->$/);
    examples.push({
      line: before.split('\n').length + (markdown.slice(0, match.index).endsWith('\n\n') ? 2 : 1),
      language: match[1],
      code: match[2],
      directive: comment ? { kind: comment[1] as DirectiveKind, argument: comment[2] } : undefined,
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
  await symlink(path.join(repoRoot, 'examples'), path.join(work, 'examples'));
  await symlink(repoRoot, path.join(modules, 'atrium'));
  await symlink('../atrium/bin/atrium.js', path.join(modules, '.bin', 'atrium'));
  return work;
}

/** The ports the README's examples name, and what they are. */
const README_PORTS = { org: 8080, content: 8081, agent: 9100, callback: 8976 } as const;
type Ports = Record<keyof typeof README_PORTS, number>;

/**
 * Which ports the run uses: `readme`, each README port when it is free (else a free one standing in for it), as a
 * newcomer's terminal would; `free`, free ports for all of them, for a test suite running beside others.
 */
export type PortChoice = 'readme' | 'free';

async function choosePorts(choice: PortChoice): Promise<Ports> {
  const ports = {} as Ports;
  for (const [name, port] of Object.entries(README_PORTS) as [keyof Ports, number][]) {
    ports[name] = choice === 'readme' && (await portIsFree(port)) ? port : await freePort();
  }
  return ports;
}

interface Shell {
  child: ChildProcess;
  output: string[];
  /** Its exit code, or the signal that ended it. */
  exited: Promise<number | NodeJS.Signals | null>;
}

/**
 * `bash -c script` in the work folder, in its own process group (so what it starts ends with it), handing each
 * line it prints to `onLine`.
 */
function startShell(work: string, env: NodeJS.ProcessEnv, script: string, onLine: (line: string) => void = () => {}): Shell {
  const child = spawn('bash', ['-c', script], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const output: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    readline.createInterface({ input: stream }).on('line', (line) => {
      output.push(line);
      onLine(line);
    });
  }
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  return { child, output, exited };
}

async function stopShell(shell: Shell): Promise<void> {
  if (shell.child.exitCode !== null || shell.child.signalCode !== null) return;
  try {
    process.kill(-shell.child.pid!, 'SIGTERM');
  } catch {
    return; // the group is gone already
  }
  await shell.exited;
}

/** The lines of a shell command that sources the examples' exported variables first. */
const sourced = (state: string, code: string) => `set -eo pipefail\nsource ${JSON.stringify(state)}\n${code}\n`;

/**
 * What `npm start` runs, in the work folder (so `./data` is the work folder's), with the variables the examples
 * exported so far.
 */
async function startServices(work: string, env: NodeJS.ProcessEnv, state: string, ports: Ports): Promise<Shell> {
  const services = startShell(work, env, sourced(state, `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(repoRoot, 'bin', 'atrium.js'))} serve`));
  const exited = services.exited.then((code) => {
    throw new Error(`npm start exited with ${code}`);
  });
  await Promise.race([
    Promise.all([waitForHealth(`http://127.0.0.1:${ports.org}/health`, 180_000), waitForHealth(`http://127.0.0.1:${ports.content}/health`, 180_000)]),
    exited,
  ]).catch(async (error: Error) => {
    await stopShell(services);
    throw new Error(`${error.message}\n${services.output.join('\n')}`);
  });
  exited.catch(() => {});
  return services;
}

/** Starts a background example and resolves once it has printed its first line. */
async function startBackground(work: string, env: NodeJS.ProcessEnv, script: string, where: string): Promise<Shell> {
  let printed!: () => void;
  const firstLine = new Promise<void>((resolve) => (printed = resolve));
  const shell = startShell(work, env, script, () => printed());
  const timeout = new Promise<void>((_, reject) => setTimeout(() => reject(new Error('printed nothing within 30 s')), 30_000).unref());
  const exited = shell.exited.then((code) => {
    throw new Error(`exited with ${code}`);
  });
  await Promise.race([firstLine, timeout, exited]).catch(async (error: Error) => {
    await stopShell(shell);
    throw new Error(`${where}: the background example ${error.message}\n--- output ---\n${shell.output.join('\n')}`);
  });
  exited.catch(() => {});
  return shell;
}

/**
 * Runs a block to its end (at most two minutes); with a person, each line it prints is handed to them in turn,
 * and the block fails when one of their steps does.
 */
async function runBlock(
  work: string,
  env: NodeJS.ProcessEnv,
  script: string,
  person: ReadmePerson | undefined,
  log: (line: string) => void,
): Promise<{ code: number | NodeJS.Signals | null; timedOut: boolean; output: string[]; personError?: Error }> {
  let steps = Promise.resolve();
  let personError: Error | undefined;
  const shell = startShell(work, env, script, (line) => {
    if (!person) return;
    // What the person reads, in the run's log too.
    log(`  > ${line}`);
    steps = steps.then(async () => {
      if (personError) return;
      const done = await person.follow(line).catch((error: Error) => {
        personError = error;
        return null;
      });
      if (done) log(`  person: ${done}`);
      if (personError) await stopShell(shell);
    });
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void stopShell(shell);
  }, 120_000);
  const code = await shell.exited;
  clearTimeout(timer);
  await steps;
  return { code, timedOut, output: shell.output, personError };
}

export async function runReadmeExamples(log: (line: string) => void = console.log, options: { ports?: PortChoice } = {}): Promise<void> {
  const examples = extractExamples(await readFile(path.join(repoRoot, 'README.md'), 'utf8'));
  const ports = await choosePorts(options.ports ?? 'readme');
  const work = await prepareWorkDir();
  const state = path.join(work, '.example-env');
  // The newcomer's environment, less anything that would point Atrium elsewhere than its defaults.
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(ATRIUM_|CONTENT_|ORG_|AUTH_|DATABASE_URL|LOG_|METRICS_|HOST$|npm_)/.test(name)),
  );
  Object.assign(env, { ORG_PORT: String(ports.org), CONTENT_PORT: String(ports.content), LOG_FORMAT: 'json', LOG_LEVEL: 'warn' });
  const rewrite = (code: string) =>
    (Object.keys(README_PORTS) as (keyof Ports)[]).reduce(
      (text, name) => (ports[name] === README_PORTS[name] ? text : text.replace(new RegExp(`\\b${README_PORTS[name]}\\b`, 'g'), String(ports[name]))),
      code,
    );

  await writeFile(state, '');
  let services = await startServices(work, env, state, ports);
  const background: Shell[] = [];
  // One browser per person for the whole run: signed in once, as a person stays.
  const people = new Map<string, ReadmePerson>();
  try {
    for (const example of examples) {
      const where = `README.md:${example.line}`;
      const directive = example.directive;
      if (directive?.kind === 'file') {
        await writeFile(path.join(work, directive.argument), rewrite(example.code));
        log(`${where} saved as ${directive.argument}`);
        continue;
      }
      if (!['sh', 'bash'].includes(example.language)) continue;
      if (directive?.kind === 'skip') {
        log(`${where} not run: ${directive.argument}`);
        continue;
      }
      const code = rewrite(example.code);
      if (directive?.kind === 'background') {
        background.push(await startBackground(work, env, sourced(state, code), where));
        log(`${where} started in the background`);
        continue;
      }
      const stopped = directive?.kind === 'services stopped';
      if (stopped) await stopShell(services);
      const person = directive?.kind === 'person' ? await personFor(directive.argument, work, env, state, people) : undefined;
      const result = await runBlock(work, env, `${sourced(state, code)}export -p > ${JSON.stringify(state)}\n`, person, log);
      const output = `--- example ---\n${example.code}--- output ---\n${result.output.join('\n')}`;
      if (result.personError) throw new Error(`${where}: the person could not do what the example asked: ${result.personError.message}\n${output}`);
      if (result.timedOut) throw new Error(`${where}: the example ran past two minutes and was stopped\n${output}`);
      if (result.code !== 0) throw new Error(`${where}: the example exited with ${result.code}\n${output}`);
      log(`${where} ok (${example.code.split('\n').filter((line) => line.trim() && !line.trim().startsWith('#')).length} lines)`);
      if (stopped) services = await startServices(work, env, state, ports);
    }
  } finally {
    for (const person of people.values()) await person.close();
    for (const shell of background) await stopShell(shell);
    await stopShell(services);
    await rm(work, { recursive: true, force: true });
  }
}

/** `EMAIL $VARIABLE`: the person, with the password an earlier example exported. */
async function personFor(argument: string, work: string, env: NodeJS.ProcessEnv, state: string, people: Map<string, ReadmePerson>) {
  const [email, variable] = argument.split(/\s+/);
  const known = people.get(argument);
  if (known) return known;
  if (!email || !variable?.startsWith('$')) throw new Error(`example: person wants "EMAIL $VARIABLE", got "${argument}"`);
  const shell = startShell(work, env, sourced(state, `printf '%s\\n' "${variable}"`));
  if ((await shell.exited) !== 0 || !shell.output[0]) throw new Error(`example: person: ${variable} is not exported by an earlier example`);
  const person = readmePerson(email, shell.output[0]);
  people.set(argument, person);
  return person;
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
