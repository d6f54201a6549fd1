/**
 * What `atrium help [COMMAND]` and `atrium COMMAND --help` print: each command's synopsis, its options and the
 * environment variables it reads.
 */
import { ENV_VARIABLES } from '../config.js';

export interface CommandHelp {
  synopsis: string;
  summary: string;
  options: Array<[flag: string, meaning: string]>;
  /** Variables beyond those every command reads (ATRIUM_DATA_DIR and the database URLs). */
  environment: readonly string[];
  notes?: string;
}

const DATABASE_VARIABLES = ['ATRIUM_DATA_DIR', 'DATABASE_URL', 'CONTENT_DATABASE_URL', 'ORG_DATABASE_URL'];
const ONLY: [string, string] = ['--only org|content', 'one service instead of both'];
const HELP: [string, string] = ['-h, --help', 'this help'];

export const COMMANDS = {
  serve: {
    synopsis: 'atrium serve [--only org|content]',
    summary: 'run the org service (default http://localhost:8080) and the content service (http://localhost:8081)',
    options: [ONLY, HELP],
    environment: ENV_VARIABLES,
    notes: '`npm start` runs `atrium serve`. Ctrl-C or SIGTERM drains in-flight requests and exits.',
  },
  migrate: {
    synopsis: 'atrium migrate [--only org|content]',
    summary: 'apply database migrations and exit (serve does this on every start too)',
    options: [ONLY, HELP],
    environment: DATABASE_VARIABLES,
  },
  org: {
    synopsis: 'atrium org apply FILE | org export [FILE] | org schema',
    summary: 'apply an organization file (YAML: people, spaces, agents, capabilities, rules), write the organization as one, or print its JSON Schema',
    options: [HELP],
    environment: [...DATABASE_VARIABLES.filter((name) => name !== 'CONTENT_DATABASE_URL'), 'and every password_env / secret_env the file names'],
    notes:
      'With the embedded database, stop the org service first: the embedded database serves one process. `org export` writes the ' +
      'organization as it is now, the console\'s records too, to FILE or standard output: applying that file changes nothing (it ' +
      'takes the console\'s records over); passwords and generated signing secrets are never written. `org schema` prints the ' +
      'file\'s JSON Schema for editors (`npx atrium org schema > org-file.schema.json`).',
  },
  people: {
    synopsis: 'atrium people set-password EMAIL',
    summary: "set a person's password, read from standard input, and sign out their web sessions",
    options: [HELP],
    environment: DATABASE_VARIABLES.filter((name) => name !== 'CONTENT_DATABASE_URL'),
    notes:
      'The password is the first line of standard input (never an argument), at least 8 characters like ATRIUM_ADMIN_PASSWORD: ' +
      '`printf %s "$NEW_PASSWORD" | npx atrium people set-password EMAIL`. With the embedded database, stop the org service first. ' +
      'A signed-in person can also change their own password on /account.',
  },
  activity: {
    synopsis: 'atrium activity verify',
    summary: "check the organization's activity log: every entry against its hash and the one before it",
    options: [HELP],
    environment: DATABASE_VARIABLES.filter((name) => name !== 'CONTENT_DATABASE_URL'),
    notes:
      'Prints the number of entries and the chain\'s head (its last position and hash: keep it to notice a deleted tail later) and ' +
      'exits 0 when the chain is intact; otherwise names each changed or deleted entry and exits 1. With the embedded database, ' +
      'stop the org service first.',
  },
  demo: {
    synopsis: 'atrium demo',
    summary: 'fill a running content service with example posts, a changelog entry and roadmap items, and exit',
    options: [HELP],
    environment: ['CONTENT_PUBLIC_URL', 'CONTENT_PORT', 'CONTENT_API_SECRET', 'ATRIUM_DATA_DIR'],
    notes: 'Safe to run twice: what already exists is left as it is.',
  },
  help: {
    synopsis: 'atrium help [COMMAND]',
    summary: 'list the commands, or explain one',
    options: [],
    environment: [],
  },
} satisfies Record<string, CommandHelp>;

export type CommandName = keyof typeof COMMANDS;

export function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

const README = 'The full guide is README.md at the root of the project.';

export function overview(version: string): string {
  const width = Math.max(...Object.values(COMMANDS).map((command) => command.synopsis.length));
  const lines = Object.values(COMMANDS).map((command) => `  ${command.synopsis.padEnd(width)}  ${command.summary}`);
  return [
    `atrium ${version}: the organization server for people and AI agents, and the website content service`,
    '',
    'usage:',
    ...lines,
    '',
    'options: -h, --help (also after a command), -v, --version',
    'Run `atrium help COMMAND` for its options and environment variables.',
    README,
  ].join('\n');
}

export function commandHelp(name: CommandName): string {
  const command: CommandHelp = COMMANDS[name];
  const width = Math.max(0, ...command.options.map(([flag]) => flag.length));
  return [
    `usage: ${command.synopsis}`,
    '',
    command.summary,
    ...(command.options.length ? ['', 'options:', ...command.options.map(([flag, meaning]) => `  ${flag.padEnd(width)}  ${meaning}`)] : []),
    ...(command.environment.length ? ['', 'environment:', ...wrap(command.environment.join(', '), 100).map((line) => `  ${line}`)] : []),
    ...(command.notes ? ['', command.notes] : []),
    '',
    README,
  ].join('\n');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : lines;
}
