/**
 * The organization the task tests run in: the owner in space `general`, another person alone in space
 * `secret`, a person in no space, an agent `scribe` with a webhook delivery and an agent `sleepy` the tests
 * disable.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OWNER } from './org.js';

export const OTHER = { email: 'other@example.com', password: 'other-password-123' };
export const NOMAD = { email: 'nomad@example.com', password: 'nomad-password-123' };

/**
 * Writes the organization file into a temporary directory; `remove()` deletes it. `scribeUrl`: where `scribe`'s
 * deliveries go, signed (by default an address nothing listens on, without a secret: every delivery fails).
 */
export async function writeTaskOrgFile(options: { scribeUrl?: string } = {}): Promise<{ orgFile: string; remove(): Promise<void> }> {
  const scribeDelivery = options.scribeUrl
    ? `{ kind: webhook, url: "${options.scribeUrl}", secret_env: TASKS_SCRIBE_SECRET }`
    : '{ kind: webhook, url: "http://127.0.0.1:9/agent" }';
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
  - { key: scribe, name: Scribe, description: Writes things, autonomy: 2, responsible: ${OWNER.email}, delivery: ${scribeDelivery} }
  - { key: sleepy, name: Sleepy, description: Disabled in the tests, autonomy: 2, responsible: ${OWNER.email} }
`,
  );
  process.env.TASKS_OTHER_PASSWORD = OTHER.password;
  process.env.TASKS_NOMAD_PASSWORD = NOMAD.password;
  process.env.TASKS_SCRIBE_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
  return { orgFile, remove: () => rm(dir, { recursive: true, force: true }) };
}
