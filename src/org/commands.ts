/** `atrium org apply FILE`: applies an organization file to the org database and says what changed. */
import type { OrgConfig } from '../config.js';
import { openDatabase } from '../platform/database.js';
import { applyOrgFile, type ApplyReport } from './apply-org-file.js';
import { readOrgFile } from './org-file.js';

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

/** "2 created (ada@example.com, bob@example.com)", or "0 created". */
function named(names: string[], outcome: string): string {
  return `${names.length} ${outcome}${names.length ? ` (${names.join(', ')})` : ''}`;
}
