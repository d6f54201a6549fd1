/**
 * `atrium org apply FILE`: applies an organization file to the org database and says what changed, naming each record.
 * `atrium people set-password EMAIL`: sets a person's password and signs out their web sessions.
 */
import { passwordRule, type OrgConfig } from '../config.js';
import { UsageError } from '../cli/errors.js';
import { openDatabase } from '../platform/database.js';
import { applyOrgFile, type ApplyReport } from './org-file/apply.js';
import { readOrgFile } from './org-file/schema.js';
import { findPersonByEmail, setPassword } from './people/records.js';

export async function runOrgApply(config: OrgConfig, file: string, env: NodeJS.ProcessEnv = process.env): Promise<ApplyReport> {
  const parsed = await readOrgFile(file);
  const database = await openDatabase(config.database);
  try {
    return await applyOrgFile(database.db, parsed, env, file);
  } finally {
    await database.close();
  }
}

export function describeReport(file: string, report: ApplyReport): string {
  const counts = (['people', 'spaces', 'agents', 'capabilities'] as const).map((kind) =>
    `${kind}: ${(['created', 'updated', 'unchanged'] as const).map((outcome) => named(report[kind][outcome], outcome)).join(', ')}`,
  );
  const rules = `rules: ${report.rules.count}${report.rules.changed ? ' (replaced)' : ' (unchanged)'}`;
  return [`applied ${file}`, ...counts, rules, ...report.warnings.map((warning) => `warning: ${warning}`)].join('\n  ');
}

/** What the command prints: whose password changed and how many web sessions that ended. */
export async function runSetPassword(config: OrgConfig, email: string, password: string): Promise<string> {
  const rule = passwordRule.safeParse(password);
  if (!rule.success) throw new UsageError(`the new password ${rule.error.issues[0]?.message} (the rule of ATRIUM_ADMIN_PASSWORD)`);
  const database = await openDatabase(config.database);
  try {
    const person = await findPersonByEmail(database.db, email);
    if (!person) throw new UsageError(`no person with the email ${email} in the organization`);
    const ended = await database.db.transaction((tx) => setPassword(tx, person.id, password));
    return `set the password of ${person.email}; signed out ${ended} web session${ended === 1 ? '' : 's'}`;
  } finally {
    await database.close();
  }
}

/** "2 created (ada@example.com, bob@example.com)", or "0 created". */
function named(names: string[], outcome: string): string {
  return `${names.length} ${outcome}${names.length ? ` (${names.join(', ')})` : ''}`;
}
