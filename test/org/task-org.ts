/**
 * The organization the task tests run in: the owner in space `general`, another person alone in space
 * `secret`, a person in no space, an agent `scribe` with a webhook delivery and an agent `sleepy` the tests
 * disable.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OWNER } from '../helpers/org.js';

export const OTHER = { email: 'other@example.com', password: 'other-password-123' };
export const NOMAD = { email: 'nomad@example.com', password: 'nomad-password-123' };

/** Writes the organization file into a temporary directory; `remove()` deletes it. */
export async function writeTaskOrgFile(): Promise<{ orgFile: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-tasks-'));
  const orgFile = path.join(dir, 'org.yaml');
  await writeFile(
    orgFile,
    `organization: { name: Task Co }
people:
  - { email: ${OTHER.email}, name: Other, password_env: TASKS_OTHER_PASSWORD }
  - { email: ${NOMAD.email}, name: Nomad, password_env: TASKS_NOMAD_PASSWORD }
spaces:
  - { key: general, name: General, members: [${OWNER.email}] }
  - { key: secret, name: Secret, members: [${OTHER.email}] }
agents:
  - { key: scribe, name: Scribe, description: Writes things, autonomy: 2, responsible: ${OWNER.email}, delivery: { kind: webhook, url: "http://127.0.0.1:9/agent" } }
  - { key: sleepy, name: Sleepy, description: Disabled in the tests, autonomy: 2, responsible: ${OWNER.email} }
`,
  );
  process.env.TASKS_OTHER_PASSWORD = OTHER.password;
  process.env.TASKS_NOMAD_PASSWORD = NOMAD.password;
  return { orgFile, remove: () => rm(dir, { recursive: true, force: true }) };
}
