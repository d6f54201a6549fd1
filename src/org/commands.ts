/**
 * `atrium org apply FILE`: applies an organization file to the org database and says what changed, naming each record.
 * `atrium org export [FILE]`: writes the organization as an organization file (to standard output without FILE).
 * `atrium people set-password EMAIL`: sets a person's password and signs out their web sessions.
 * `atrium activity verify`: checks the activity log's hash chain and names every entry changed or deleted.
 */
import { passwordRule, type OrgConfig } from '../config.js';
import { UsageError } from '../cli/errors.js';
import { announceWithoutFeed } from '../platform/changes.js';
import { openDatabase } from '../platform/database.js';
import { ORG_DIRECTORY } from './changes.js';
import { verifyActivity } from './activity/chain.js';
import { writeFile } from 'node:fs/promises';
import { applyOrgFile, type ApplyReport } from './org-file/apply.js';
import { exportOrgFile } from './org-file/export.js';
import { readOrgFile } from './org-file/schema.js';
import { findPersonByEmail, setPassword } from './people/records.js';

export async function runOrgApply(config: OrgConfig, file: string, env: NodeJS.ProcessEnv = process.env): Promise<ApplyReport> {
  const parsed = await readOrgFile(file);
  const database = await openDatabase(config.database);
  try {
    // The running services keep the directory in memory (read-cache.ts): they drop it when this commits.
    return await database.db.transaction(async (tx) => {
      const report = await applyOrgFile(tx, parsed, env, file);
      await announceWithoutFeed(tx, database.schema, [{ kind: ORG_DIRECTORY }]);
      return report;
    });
  } finally {
    await database.close();
  }
}

/** The organization file as YAML: written to `file` (and said so), or returned for standard output. */
export async function runOrgExport(config: OrgConfig, file?: string): Promise<string> {
  const database = await openDatabase(config.database);
  try {
    const text = await exportOrgFile(database.db);
    if (!file) return text;
    await writeFile(file, text);
    return `wrote the organization to ${file}`;
  } finally {
    await database.close();
  }
}

export function describeReport(file: string, report: ApplyReport): string {
  // "adopted" is named only when the file took something over from the console: most applies take nothing over.
  const counts = (['people', 'spaces', 'agents', 'capabilities', 'event_endpoints'] as const).map((kind) => {
    const adopted = report[kind].adopted;
    const taken = adopted.length ? `; ${named(adopted, 'adopted from the console')}` : '';
    return `${kind}: ${(['created', 'updated', 'unchanged'] as const).map((outcome) => named(report[kind][outcome], outcome)).join(', ')}${taken}`;
  });
  const adoptedRules = report.rules.adopted ? `, ${report.rules.adopted} adopted from the console` : '';
  const rules = `rules: ${report.rules.count}${report.rules.changed ? ' (replaced)' : ' (unchanged)'}${adoptedRules}`;
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
    const ended = await database.db.transaction(async (tx) => {
      const count = await setPassword(tx, person.id, password);
      await announceWithoutFeed(tx, database.schema, [{ kind: ORG_DIRECTORY }]);
      return count;
    });
    return `set the password of ${person.email}; signed out ${ended} web session${ended === 1 ? '' : 's'}`;
  } finally {
    await database.close();
  }
}

/** "2 created (ada@example.com, bob@example.com)", or "0 created". */
function named(names: string[], outcome: string): string {
  return `${names.length} ${outcome}${names.length ? ` (${names.join(', ')})` : ''}`;
}

/** The chain's report for a terminal; `ok` is false when any entry was changed or deleted. */
export async function runActivityVerify(config: OrgConfig): Promise<{ ok: boolean; text: string }> {
  const database = await openDatabase(config.database);
  try {
    const report = await verifyActivity(database.db);
    const head = report.head ? `; head: position ${report.head.position}, hash ${report.head.hash}` : '';
    if (report.problems.length === 0) return { ok: true, text: `activity log intact: ${report.entries} entries${head}` };
    const lines = report.problems.map((problem) => `  position ${problem.position}: ${problem.problem}`);
    return { ok: false, text: [`activity log TAMPERED: ${report.problems.length} problem(s) in ${report.entries} entries${head}`, ...lines].join('\n') };
  } finally {
    await database.close();
  }
}
