/**
 * DESIGN 6 and issue-level rule "a due run fires once even with several processes": two org processes on one
 * PostgreSQL database, both firing the same due runs at the same moment, and the scheduler's own periodic job
 * firing a run that comes due while both processes run.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationRunners } from '../../src/org/operations/operations.js';
import { instantToLocal } from '../../src/org/tasks/schedules.js';
import { runDueTasks, TASK_RUNS_EVERY_SECONDS } from '../../src/org/tasks/records.js';
import { postgresUrl, testDatabase, type TestDatabase } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { writeTaskOrgFile } from '../helpers/task-org.js';

describe.runIf(postgresUrl)('scheduled task runs with two org processes on one PostgreSQL database', () => {
  let database: TestDatabase;
  let orgFile: Awaited<ReturnType<typeof writeTaskOrgFile>>;
  let a: TestOrg;
  let b: TestOrg;
  let owner: OrgMcp;
  let general: string;
  let scribe: string;
  // The delivery is not under test: a stand-in runner leaves each task operation running.
  const runners: OperationRunners = { task: async () => ({ status: 'running' }) };

  beforeAll(async () => {
    database = testDatabase('postgres');
    orgFile = await writeTaskOrgFile();
    a = await startOrg('postgres', { database, config: { orgFile: orgFile.orgFile }, operationRunners: runners });
    b = await startOrg('postgres', { database, config: { orgFile: orgFile.orgFile, publicUrl: a.url, authPublicUrl: a.url }, operationRunners: runners });
    owner = await connectOrgMcp(a);
    const context = await owner.callOk('service_context');
    general = context.spaces.find((space: { key: string }) => space.key === 'general').id;
    scribe = context.agents.find((agent: { key: string }) => agent.key === 'scribe').id;
  });
  afterAll(async () => {
    await owner?.close();
    await b?.close();
    await a?.close();
    await database?.drop();
    await orgFile?.remove();
  });

  async function runsOf(taskId: string) {
    const [counts] = await a.service.database.rows<{ operations: number; events: number }>(sql`
      SELECT (SELECT count(*)::int FROM operations WHERE kind = 'task' AND input->>'task_id' = ${taskId}) AS operations,
             (SELECT count(*)::int FROM task_progress WHERE task_id = ${taskId} AND message LIKE 'Scheduled run%') AS events`);
    return counts;
  }

  it('fires each due run once when both processes fire at the same moment', async () => {
    const tasks = [];
    for (const n of [1, 2, 3, 4, 5, 6]) {
      tasks.push(
        await owner.callOk('create_task', {
          space_id: general,
          title: `Raced run ${n}`,
          assignee_agent_id: scribe,
          schedule: { at: '2031-05-05T10:00', timezone: 'Europe/Berlin' },
        }),
      );
    }
    const due = new Date(tasks[0].next_run_at);
    const fired = await Promise.all([runDueTasks(a.service.ctx, due), runDueTasks(b.service.ctx, due), runDueTasks(a.service.ctx, due), runDueTasks(b.service.ctx, due)]);
    expect(fired.reduce((sum, count) => sum + count, 0)).toBe(6);
    for (const task of tasks) expect(await runsOf(task.id)).toEqual({ operations: 1, events: 1 });
    expect(await Promise.all([runDueTasks(a.service.ctx, due), runDueTasks(b.service.ctx, due)])).toEqual([0, 0]);
  });

  it('the periodic scheduler fires a run that comes due, once, on whichever process claims it', async () => {
    // Five seconds from now (time enough to create it first), as a local time in Berlin to the second.
    const soon = new Date(Math.ceil((Date.now() + 5000) / 1000) * 1000);
    const task = await owner.callOk('create_task', {
      space_id: general,
      title: 'Run by the scheduler',
      assignee_agent_id: scribe,
      schedule: { at: instantToLocal(soon, 'Europe/Berlin'), timezone: 'Europe/Berlin' },
    });
    expect(task.next_run_at).toBe(soon.toISOString().replace('Z', '000Z'));
    const deadline = Date.now() + (5 + 3 * TASK_RUNS_EVERY_SECONDS) * 1000;
    let seen = task;
    while (!seen.progress.length && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      seen = await owner.callOk('get_task', { task_id: task.id });
    }
    expect(seen.progress).toEqual([{ at: expect.any(String), message: expect.stringMatching(/^Scheduled run at .* Europe\/Berlin: sent to its agent$/), operation_id: expect.any(String) }]);
    expect(seen.next_run_at).toBeUndefined();
    expect(await runsOf(task.id)).toEqual({ operations: 1, events: 1 });
  }, 60_000);
});
