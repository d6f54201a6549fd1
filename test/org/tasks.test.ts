/**
 * Tracked tasks end to end (DESIGN 4.1, 4.3, 4.5): the five task tools through OAuth-issued tokens and the MCP
 * SDK client, visibility by space, the status table as the agent's side moves a task, questions and answers,
 * cancelling, idempotent creates, bad input (a refused call writes nothing), scheduled runs that fire once
 * and stay at their local time across daylight-saving changes, and full-text search.
 *
 * The `task` operations a task starts are run by a stand-in runner that only records them: delivering to the
 * agent is the delivery's (tested with it); here what matters is that the operation is started, once, for
 * the right task, run time, person, agent and space.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationRow } from '../../src/org/operations/states.js';
import {
  addTaskProgress,
  askTaskQuestion,
  completeTask,
  getTaskForAgent,
  reopenTask,
  runDueTasks,
  searchTasks,
  startTask,
} from '../../src/org/tasks.js';
import { engines } from '../helpers/databases.js';
import { OWNER, startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient, openMcpSession, postMcp } from './oauth-flow.js';
import { connectOrgMcp, type OrgMcp } from './org-mcp.js';

const OTHER = { email: 'other@example.com', password: 'other-password-123' };
const NOMAD = { email: 'nomad@example.com', password: 'nomad-password-123' };

export async function writeTaskOrgFile(): Promise<string> {
  const orgFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'atrium-tasks-')), 'org.yaml');
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
  return orgFile;
}

describe.each(engines)('tasks on %s', (engine) => {
  let org: TestOrg;
  let owner: OrgMcp;
  let other: OrgMcp;
  let ownerId: string;
  let general: string;
  let secret: string;
  let scribe: string;
  let sleepy: string;
  /** Operations the stand-in `task` runner was handed, in order. */
  const ran: OperationRow[] = [];

  const rows = <T extends Record<string, unknown>>(query: SQL) => org.service.database.rows<T>(query);
  const ctx = () => org.service.ctx;

  beforeAll(async () => {
    org = await startOrg(engine, {
      config: { orgFile: await writeTaskOrgFile() },
      operationRunners: {
        task: async (_ctx, operation) => {
          ran.push(operation);
          return { status: 'running' };
        },
      },
    });
    owner = await connectOrgMcp(org);
    other = await connectOrgMcp(org, { email: OTHER.email, password: OTHER.password });
    const context = await owner.callOk('service_context');
    ownerId = context.person.id;
    general = context.spaces.find((space: { key: string }) => space.key === 'general').id;
    secret = (await other.callOk('service_context')).spaces[0].id;
    scribe = context.agents.find((agent: { key: string }) => agent.key === 'scribe').id;
    sleepy = context.agents.find((agent: { key: string }) => agent.key === 'sleepy').id;
    await rows(sql`UPDATE agents SET status = 'disabled' WHERE id = ${sleepy}`);
  });
  afterAll(async () => {
    await owner?.close();
    await other?.close();
    await org?.close();
  });

  describe('create_task', () => {
    it('creates an open task in the space, created by the person', async () => {
      const task = await owner.callOk('create_task', { space_id: general, title: 'Write the launch post', description: 'About the new pricing' });
      expect(task).toEqual({
        id: expect.stringMatching(/^tsk_/),
        space_id: general,
        title: 'Write the launch post',
        description: 'About the new pricing',
        status: 'open',
        created_by: { type: 'person', id: ownerId },
        progress: [],
        questions: [],
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(await owner.callOk('get_task', { task_id: task.id })).toEqual(task);
    });

    it('delivers an assigned task without a schedule at once: a task operation for the person, agent and space', async () => {
      const task = await owner.callOk('create_task', { space_id: general, title: 'Draft the changelog', assignee_agent_id: scribe });
      expect(task.assignee_agent_id).toBe(scribe);
      expect(task.progress).toEqual([{ at: expect.any(String), message: 'Sent to its agent', operation_id: expect.stringMatching(/^op_/) }]);
      const operation = await owner.callOk('get_operation', { operation_id: task.progress[0].operation_id });
      expect(operation).toMatchObject({ kind: 'task', agent_id: scribe, space_id: general });
      const [row] = await rows<{ person_id: string; client_id: string | null; input: unknown }>(
        sql`SELECT person_id, client_id, input FROM operations WHERE id = ${operation.operation_id}`,
      );
      expect(row).toEqual({ person_id: ownerId, client_id: owner.connected.clientId, input: { task_id: task.id, run_at: null } });
    });
  });
});
