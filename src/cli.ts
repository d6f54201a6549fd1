/**
 * Entry point: `atrium serve [--only org|content]`, `atrium migrate`, `atrium org apply FILE|export [FILE]|schema`,
 * `atrium people set-password EMAIL`, `atrium activity verify`, `atrium demo`,
 * `atrium help [COMMAND]`, `atrium --version`. Mistakes are reported in one line (cli/errors.ts). The services are
 * imported only by the commands that run them, so help and version answer at once.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { COMMANDS, commandHelp, isCommand, overview } from './cli/help.js';
import { describeFailure, UsageError, type FailureContext, type ServiceName } from './cli/errors.js';
import { loadConfig, type Config } from './config.js';
import { closeOnSignals, type Closable } from './platform/lifecycle.js';

const SERVICES = ['org', 'content'] as const;
const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** What the failure happened in, for the one-line message. */
const context: FailureContext = {};

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { only: { type: 'string' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
  });
  const [command, ...rest] = positionals;
  if (values.version) return void console.log(version);
  if (!command) return void console.log(overview(version));
  if (command === 'help') {
    const [topic] = rest;
    if (!topic) return void console.log(overview(version));
    if (!isCommand(topic)) throw new UsageError(`unknown command '${topic}'; the commands are: ${Object.keys(COMMANDS).join(', ')}`);
    return void console.log(commandHelp(topic));
  }
  if (!isCommand(command)) throw new UsageError(`unknown command '${command}'; run \`atrium help\` for the list`);
  if (values.help) return void console.log(commandHelp(command));
  if (values.only !== undefined && !['serve', 'migrate'].includes(command)) throw new UsageError(`${command} has no --only option (see atrium help ${command})`);
  if (values.only !== undefined && !SERVICES.includes(values.only as ServiceName)) throw new UsageError(`--only must be org or content, not '${values.only}'`);
  const selected: ServiceName[] = values.only ? [values.only as ServiceName] : [...SERVICES];
  const config = loadConfig();
  context.config = config;

  switch (command) {
    case 'serve':
      return serve(config, selected);
    case 'migrate': {
      const { openDatabase } = await import('./platform/database.js');
      for (const name of selected) {
        Object.assign(context, { service: name, phase: 'database' });
        await (await openDatabase(config[name].database)).close();
      }
      return void console.log(`migrations applied: ${selected.join(', ')}`);
    }
    case 'org': {
      const [subcommand, file, ...extra] = rest;
      if (subcommand === 'schema' && !file) {
        const { orgFileJsonSchema } = await import('./org/org-file/schema.js');
        return void console.log(JSON.stringify(orgFileJsonSchema(), null, 2));
      }
      if (subcommand === 'export' && !extra.length) {
        Object.assign(context, { service: 'org', phase: 'database' });
        const { runOrgExport } = await import('./org/commands.js');
        const written = await runOrgExport(config.org, file);
        // Without FILE the YAML itself is the output, byte for byte; with FILE, one line saying where it went.
        return void (file ? console.log(written) : process.stdout.write(written));
      }
      if (subcommand !== 'apply' || !file || extra.length) {
        throw new UsageError(`usage: atrium org apply FILE | atrium org export [FILE] | atrium org schema (see atrium help org)`);
      }
      Object.assign(context, { service: 'org', phase: 'database' });
      const { describeReport, runOrgApply } = await import('./org/commands.js');
      return void console.log(describeReport(file, await runOrgApply(config.org, file)));
    }
    case 'people': {
      const [subcommand, email, ...extra] = rest;
      if (subcommand !== 'set-password' || !email || extra.length) throw new UsageError(`usage: atrium people set-password EMAIL, the new password on standard input (see atrium help people)`);
      const { readPasswordFromStdin } = await import('./cli/read-password.js');
      const password = await readPasswordFromStdin(`new password for ${email}: `);
      Object.assign(context, { service: 'org', phase: 'database' });
      const { runSetPassword } = await import('./org/commands.js');
      return void console.log(await runSetPassword(config.org, email, password));
    }
    case 'activity': {
      const [subcommand, ...extra] = rest;
      if (subcommand !== 'verify' || extra.length) throw new UsageError('usage: atrium activity verify (see atrium help activity)');
      Object.assign(context, { service: 'org', phase: 'database' });
      const { runActivityVerify } = await import('./org/commands.js');
      const { ok, text } = await runActivityVerify(config.org);
      console.log(text);
      if (!ok) process.exitCode = 1;
      return;
    }
    case 'demo':
      return (await import('./cli/demo.js')).runDemo(config.content);
  }
}

/**
 * Starts the selected services one after the other. If one cannot start, the ones already running are
 * stopped, so the process exits instead of serving half of the platform.
 */
async function serve(config: Config, selected: ServiceName[]): Promise<void> {
  const [{ createContentService }, { createOrgService }, { prepareDatabases }] = await Promise.all([
    import('./content/service.js'),
    import('./org/service.js'),
    import('./platform/database.js'),
  ]);
  // A first start creates both embedded databases at once, with one initdb.
  await prepareDatabases(selected.map((name) => config[name].database));
  const services: Closable[] = [];
  closeOnSignals(services, (message) => console.error(message));
  try {
    for (const name of [...SERVICES].reverse().filter((service) => selected.includes(service))) {
      Object.assign(context, { service: name, phase: 'database' });
      const service = name === 'content' ? await createContentService(config.content) : await createOrgService({ ...config.org, content: config.org.content && { ...config.org.content, beside: selected.includes('content') } });
      services.push(service);
      context.phase = 'listen';
      await service.listen();
    }
  } catch (error) {
    await Promise.allSettled(services.map((service) => service.close()));
    throw error;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = describeFailure(error, context);
  if (message) console.error(`atrium: ${message}`);
  else console.error(error);
  process.exit(1);
});
