/**
 * Entry point: `atrium serve [--only org|content]`, `atrium migrate`, `atrium org apply FILE`.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createContentService } from './content/service.js';
import { closeOnSignals, type Closable } from './platform/lifecycle.js';
import { openDatabase } from './platform/database.js';
import { describeReport, runOrgApply } from './org/commands.js';
import { OrgFileError } from './org/org-file.js';
import { createOrgService } from './org/service.js';

const SERVICES = ['org', 'content'] as const;
type ServiceName = (typeof SERVICES)[number];

const usage = `usage:
  atrium serve [--only org|content]   run both services (or one)
  atrium migrate [--only org|content] apply database migrations and exit
  atrium org apply FILE               apply an organization file (YAML) and exit`;

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { only: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [command] = positionals;
  if (values.help || !command) return void console.log(usage);
  if (values.only && !SERVICES.includes(values.only as ServiceName)) throw new ConfigError(`--only must be org or content`);
  const selected = values.only ? [values.only as ServiceName] : [...SERVICES];
  const config = loadConfig();

  switch (command) {
    case 'serve':
      return serve(config, selected);
    case 'migrate':
      for (const name of selected) await (await openDatabase(config[name].database)).close();
      return void console.log(`migrations applied: ${selected.join(', ')}`);
    case 'org': {
      const [, subcommand, file] = positionals;
      if (subcommand !== 'apply' || !file) throw new ConfigError(usage);
      return void console.log(describeReport(file, await runOrgApply(config.org, file)));
    }
    default:
      throw new ConfigError(`unknown command '${command}'\n${usage}`);
  }
}

async function serve(config: Config, selected: ServiceName[]): Promise<void> {
  const services: Closable[] = [];
  closeOnSignals(services, (message) => console.error(message));
  if (selected.includes('content')) {
    const content = await createContentService(config.content);
    services.push(content);
    await content.listen();
  }
  if (selected.includes('org')) {
    const beside = selected.includes('content');
    const org = await createOrgService({ ...config.org, content: config.org.content && { ...config.org.content, beside } });
    services.push(org);
    await org.listen();
  }
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof ConfigError || error instanceof OrgFileError ? error.message : error);
  process.exit(1);
});
