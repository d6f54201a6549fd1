/**
 * An organization for the console's memory, tasks and people pages, with records in three spaces written
 * through the real paths (MCP tools, and the agent's side of tasks through its domain functions):
 *
 * - `general`: the owner and Bea; a decision with two versions, a task `scribe` took (202) and works on (progress,
 *   one question answered, one open) and a weekly task scheduled in Europe/Berlin;
 * - `ops` (named Backroom): the owner and Cy; a memory item and a task that both mention "zebra";
 * - `secret`: Bea alone; a memory item and a task that mention "zebra" too.
 *
 * Dee is an admin in no space. Every text a test looks for in or out of a page is unique to its space.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { addTaskProgress, askTaskQuestion } from '../../src/org/tasks/agent.js';
import type { Engine } from './databases.js';
import { OWNER, startOrg, type TestOrg } from './org.js';
import { connectOrgMcp, type OrgMcp } from './org-mcp.js';
import { signedInBrowserless, type Browserless } from './web-client.js';
import { startWebhookReceiver } from './webhook-receiver.js';

export const BEA = { email: 'bea@example.com', password: 'bea-password-123', name: 'Bea Member' } as const;
export const CY = { email: 'cy@example.com', password: 'cy-password-1234', name: 'Cy Opsworth' } as const;
export const DEE = { email: 'dee@example.com', password: 'dee-password-123', name: 'Dee Admin' } as const;

export interface ConsoleOrg {
  org: TestOrg;
  spaces: { general: string; ops: string; secret: string };
  memory: { firstVersion: string; currentVersion: string; ops: string; secret: string };
  tasks: { worked: string; weekly: string; ops: string; secret: string };
  /** The operation that delivered `tasks.worked` to scribe. */
  operation: string;
  /** A signed-in browser (without Chromium) for each person. */
  signIn(person: { email: string; password: string }): Promise<Browserless>;
  close(): Promise<void>;
}

export async function startConsoleOrg(engine: Engine): Promise<ConsoleOrg> {
  // Scribe takes its work and answers later (202): its task stays in progress, its operation running.
  const scribeHook = await startWebhookReceiver();
  scribeHook.answer.status = 202;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-console-'));
  const orgFile = path.join(dir, 'org.yaml');
  await writeFile(
    orgFile,
    `organization: { name: Console Co }
people:
  - { email: ${BEA.email}, name: ${BEA.name}, role: member, password_env: CONSOLE_BEA_PASSWORD }
  - { email: ${CY.email}, name: ${CY.name}, role: member, password_env: CONSOLE_CY_PASSWORD }
  - { email: ${DEE.email}, name: ${DEE.name}, role: admin, password_env: CONSOLE_DEE_PASSWORD }
spaces:
  - { key: general, name: General, members: [${OWNER.email}, ${BEA.email}] }
  - { key: ops, name: Backroom, members: [${OWNER.email}, ${CY.email}] }
  - { key: secret, name: Hideaway, members: [${BEA.email}] }
agents:
  - { key: scribe, name: Scribe, description: Writes things, autonomy: 2, responsible: ${OWNER.email}, delivery: { kind: webhook, url: "${scribeHook.url}/agent", secret_env: CONSOLE_SCRIBE_SECRET } }
`,
  );
  process.env.CONSOLE_BEA_PASSWORD = BEA.password;
  process.env.CONSOLE_CY_PASSWORD = CY.password;
  process.env.CONSOLE_DEE_PASSWORD = DEE.password;
  process.env.CONSOLE_SCRIBE_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
  const org = await startOrg(engine, { config: { orgFile } });
  const rows = await org.service.database.rows<{ id: string; key: string }>(sql`SELECT id, key FROM spaces`);
  const spaces = Object.fromEntries(rows.map((row) => [row.key, row.id])) as ConsoleOrg['spaces'];
  const [scribe] = await org.service.database.rows<{ id: string }>(sql`SELECT id FROM agents WHERE key = 'scribe'`);

  const clients: OrgMcp[] = [];
  const connect = async (options: Parameters<typeof connectOrgMcp>[1]) => {
    const client = await connectOrgMcp(org, options);
    clients.push(client);
    return client;
  };
  try {
    const owner = await connect({ clientName: 'Owner laptop' });
    const bea = await connect({ email: BEA.email, password: BEA.password, clientName: 'Bea phone' });
    const cy = await connect({ email: CY.email, password: CY.password, clientName: 'Cy desk' });

    const firstVersion = await owner.callOk('record_memory', {
      kind: 'decision',
      space_id: spaces.general,
      title: 'Release train leaves on Tuesdays',
      body: 'We release on Tuesday mornings.\n\nNever on Fridays.',
      tags: ['release'],
    });
    const currentVersion = await owner.callOk('record_memory', {
      kind: 'decision',
      space_id: spaces.general,
      title: 'Release train leaves on Wednesdays',
      body: 'From spring on we release on Wednesday mornings.',
      tags: ['release', 'process'],
      supersedes: firstVersion.id,
      valid_from: '2026-03-01T00:00:00+01:00',
      valid_until: '2036-03-01T00:00:00+01:00',
    });
    const ops = await cy.callOk('record_memory', {
      kind: 'instruction',
      space_id: spaces.ops,
      title: 'Opsworth zebra runbook',
      body: 'Restart the zebra cluster with the Opsworth checklist.',
    });
    const secret = await bea.callOk('record_memory', {
      kind: 'fact',
      space_id: spaces.secret,
      title: 'Hideaway zebra plan',
      body: 'The zebra plan stays in the hideaway.',
    });

    const worked = await owner.callOk('create_task', {
      space_id: spaces.general,
      title: 'Plan the offsite',
      description: 'Find a venue for twelve people.',
      assignee_agent_id: scribe.id,
    });
    const operation: string = worked.progress[0].operation_id;
    const db = org.service.ctx.db;
    // The delivery starts the task when scribe accepts it; the agent's side carries on from there.
    for (let waited = 0; (await owner.callOk('get_task', { task_id: worked.id })).status !== 'in_progress'; waited += 50) {
      if (waited > 20_000) throw new Error('scribe never took the task');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await addTaskProgress(db, worked.id, { message: 'Looked at venues', percent: 40, operationId: operation });
    const city = await askTaskQuestion(db, worked.id, { text: 'Which city suits everyone?', askedBy: scribe.id, operationId: operation });
    await askTaskQuestion(db, worked.id, { text: 'Is a budget of 5000 fine?', askedBy: scribe.id, operationId: operation });
    await owner.callOk('answer_task', { task_id: worked.id, question_id: city, answer: 'Lisbon, please' });

    const weekly = await owner.callOk('create_task', {
      space_id: spaces.general,
      title: 'Weekly report',
      schedule: { cron: '0 9 * * 1', timezone: 'Europe/Berlin' },
    });
    const opsTask = await cy.callOk('create_task', { space_id: spaces.ops, title: 'Rotate the zebra keys', description: 'Opsworth only.' });
    const secretTask = await bea.callOk('create_task', { space_id: spaces.secret, title: 'Hideaway kestrel task' });

    return {
      org,
      spaces,
      memory: { firstVersion: firstVersion.id, currentVersion: currentVersion.id, ops: ops.id, secret: secret.id },
      tasks: { worked: worked.id, weekly: weekly.id, ops: opsTask.id, secret: secretTask.id },
      operation,
      signIn: (person) => signedInBrowserless(org.url, person),
      async close() {
        await org.close();
        await scribeHook.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } finally {
    for (const client of clients) await client.close();
  }
}
