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
import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationRow } from '../../src/org/operations/states.js';
import { engines } from '../helpers/databases.js';
import { startOrg, type TestOrg } from '../helpers/org.js';
import { connectClient, openMcpSession, postMcp } from '../helpers/oauth-flow.js';
import { connectOrgMcp, type OrgMcp } from '../helpers/org-mcp.js';
import { NOMAD, OTHER, writeTaskOrgFile } from '../helpers/task-org.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { addTaskProgress, completeTask, reopenTask, startTask, getTaskForAgent, askTaskQuestion } from '../../src/org/tasks/agent.js';
import { listOpenTaskQuestions } from '../../src/org/tasks/person.js';
import { searchTasks } from '../../src/org/tasks/search.js';
import { runDueTasks } from '../../src/org/tasks/runs.js';
import { taskOperationInput } from '../../src/org/tasks/records.js';
import { defineOperationKind } from '../../src/org/operations/kinds.js';

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

  let orgFile: Awaited<ReturnType<typeof writeTaskOrgFile>>;

  /** scribe's webhook: takes every delivery (202), as an agent that works on it through the agent API would. */
  let scribeHook: WebhookReceiver;

  beforeAll(async () => {
    scribeHook = await startWebhookReceiver();
    scribeHook.answer.status = 202;
    orgFile = await writeTaskOrgFile({ scribeUrl: `${scribeHook.url}/agent` });
    org = await startOrg(engine, {
      config: { orgFile: orgFile.orgFile },
      operationKinds: [
        defineOperationKind({
          kind: 'task',
          input: taskOperationInput,
          run: async (_ctx, operation) => {
            ran.push(operation);
            return { status: 'running' };
          },
        }),
      ],
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
    await orgFile?.remove();
    await scribeHook?.close();
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

    it('schedules a one-shot task at its local time without delivering it now', async () => {
      const task = await owner.callOk('create_task', {
        space_id: general,
        title: 'Send the June newsletter',
        assignee_agent_id: scribe,
        schedule: { at: '2027-06-01T09:00', timezone: 'europe/berlin' },
      });
      expect(task.schedule).toEqual({ at: '2027-06-01T09:00:00', timezone: 'Europe/Berlin' });
      expect(task.next_run_at).toBe('2027-06-01T07:00:00.000000Z');
      expect(task.progress).toEqual([]);
      expect(await operationsOf(task.id)).toEqual([]);
    });

    it('schedules a recurring task at the next matching local time', async () => {
      const task = await owner.callOk('create_task', { space_id: general, title: 'Weekly report', schedule: { cron: '0 9 * * 1', timezone: 'America/New_York' } });
      expect(task.schedule).toEqual({ cron: '0 9 * * 1', timezone: 'America/New_York' });
      const next = new Date(task.next_run_at);
      expect(next.getTime()).toBeGreaterThan(Date.now());
      expect(next.getTime() - Date.now()).toBeLessThanOrEqual(7 * 24 * 3600 * 1000);
      // Monday 09:00 in New York, whatever the offset is that day.
      expect(new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(next)).toBe('Mon 09:00');
    });

    it('creates one task per idempotency key, also when the calls race', async () => {
      const args = { space_id: general, title: 'Book the venue', idempotency_key: 'book-venue-1' };
      const first = await owner.callOk('create_task', args);
      expect(await owner.callOk('create_task', args)).toEqual(first);
      const racing = { ...args, title: 'Order the catering', idempotency_key: 'catering-1' };
      const results = await Promise.all([1, 2, 3, 4].map(() => owner.callOk('create_task', racing)));
      expect(new Set(results.map((task) => task.id)).size).toBe(1);
      expect(await countTasks('Order the catering')).toBe(1);
      expect(await countTasks('Book the venue')).toBe(1);
    });

    it('refuses the same key with other arguments, writing nothing', async () => {
      await owner.callOk('create_task', { space_id: general, title: 'Print the badges', idempotency_key: 'badges-1' });
      const error = await expectRefusedUnchanged(owner, 'create_task', { space_id: general, title: 'Print the flyers', idempotency_key: 'badges-1' });
      expect(error.code).toBe('idempotency_conflict');
      expect(await countTasks('Print the flyers')).toBe(0);
    });
  });

  describe('list_tasks', () => {
    it('pages newest first without skipping or repeating, whatever the page size', async () => {
      for (const n of [1, 2, 3, 4, 5]) await owner.callOk('create_task', { space_id: general, title: `Paged task ${n}` });
      const all = await owner.callOk('list_tasks', { limit: 50 });
      expect(all.next_cursor).toBeNull();
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await owner.callOk('list_tasks', { limit: 2, ...(cursor ? { cursor } : {}) });
        expect(page.tasks.length).toBeLessThanOrEqual(2);
        paged.push(...page.tasks.map((task: { id: string }) => task.id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      expect(paged).toEqual(all.tasks.map((task: { id: string }) => task.id));
      const titles = all.tasks.map((task: { title: string }) => task.title);
      expect(titles.slice(0, 5)).toEqual(['Paged task 5', 'Paged task 4', 'Paged task 3', 'Paged task 2', 'Paged task 1']);
      expect(all.tasks.every((task: { space_id: string }) => task.space_id === general)).toBe(true);
    });

    it('filters by status, space and assignee', async () => {
      const assigned = await owner.callOk('create_task', { space_id: general, title: 'Filtered task', assignee_agent_id: scribe });
      const byAgent = await owner.callOk('list_tasks', { assignee_agent_id: scribe, limit: 50 });
      expect(byAgent.tasks.map((task: { id: string }) => task.id)).toContain(assigned.id);
      expect(byAgent.tasks.every((task: { assignee_agent_id?: string }) => task.assignee_agent_id === scribe)).toBe(true);
      await completeTask(ctx().db, assigned.id, { result: { ok: true } });
      const done = await owner.callOk('list_tasks', { status: 'done', space_id: general, limit: 50 });
      expect(done.tasks.map((task: { id: string }) => task.id)).toContain(assigned.id);
      expect(done.tasks.every((task: { status: string }) => task.status === 'done')).toBe(true);
      const open = await owner.callOk('list_tasks', { status: 'open' });
      expect(open.tasks.map((task: { id: string }) => task.id)).not.toContain(assigned.id);
      expect(await owner.callOk('list_tasks', { assignee_agent_id: 'agt_nobody' })).toEqual({ tasks: [], next_cursor: null });
    });
  });

  describe('visibility', () => {
    let hidden: { id: string };
    beforeAll(async () => {
      hidden = await other.callOk('create_task', { space_id: secret, title: 'Secret plan', assignee_agent_id: scribe });
    });

    it('never lists a task of a space the person is not in', async () => {
      const all = await owner.callOk('list_tasks', { limit: 50 });
      expect(all.tasks.map((task: { id: string }) => task.id)).not.toContain(hidden.id);
      expect((await other.callOk('list_tasks', {})).tasks.map((task: { id: string }) => task.id)).toEqual([hidden.id]);
    });

    it.each([
      ['get_task', {}],
      ['answer_task', { question_id: 'q_any', answer: 'yes' }],
      ['cancel_task', {}],
    ])('%s of another space’s task is not_found, exactly like an unknown id', async (tool, args) => {
      const unknown = await owner.callError(tool, { task_id: 'tsk_doesnotexist', ...args });
      const elsewhere = await expectRefusedUnchanged(owner, tool, { task_id: hidden.id, ...args });
      expect(elsewhere).toEqual(unknown);
      expect(elsewhere).toEqual({ code: 'not_found', message: 'task not found' });
    });

    it('refuses a space_id outside the person’s spaces as not_found', async () => {
      expect(await expectRefusedUnchanged(owner, 'list_tasks', { space_id: secret })).toMatchObject({ code: 'not_found' });
      expect(await expectRefusedUnchanged(owner, 'create_task', { space_id: secret, title: 'Sneak in' })).toMatchObject({ code: 'not_found' });
    });

    it('shows a task to its assigned agent only', async () => {
      expect((await getTaskForAgent(ctx().db, hidden.id, scribe)).id).toBe(hidden.id);
      await expect(getTaskForAgent(ctx().db, hidden.id, sleepy)).rejects.toMatchObject({ code: 'not_found' });
    });
  });

  describe('the agent’s side: start, progress, questions, answers, done', () => {
    it('waits while questions are open and returns to in_progress when the last is answered', async () => {
      const task = await owner.callOk('create_task', { space_id: general, title: 'Plan the offsite', assignee_agent_id: scribe });
      const operationId = task.progress[0].operation_id;
      await startTask(ctx().db, task.id, { operationId });
      await addTaskProgress(ctx().db, task.id, { message: 'Looked at venues', percent: 20, operationId });
      await expect(addTaskProgress(ctx().db, task.id, { message: 'Too far', percent: 101 })).rejects.toMatchObject({
        code: 'invalid_request',
        details: { issues: [{ field: 'percent', message: 'a number from 0 to 100' }] },
      });
      const city = await askTaskQuestion(ctx().db, task.id, { text: 'Which city?', askedBy: scribe, operationId });
      const people = await askTaskQuestion(ctx().db, task.id, { text: 'How many people?', askedBy: scribe, operationId });

      const waiting = await owner.callOk('get_task', { task_id: task.id });
      expect(waiting.status).toBe('waiting');
      expect(waiting.progress.map((event: { message: string }) => event.message)).toEqual([
        'Sent to its agent',
        'Started by its agent',
        'Looked at venues',
        'Asked: Which city?',
        'Asked: How many people?',
      ]);
      expect(waiting.progress[2]).toEqual({ at: expect.any(String), message: 'Looked at venues', percent: 20, operation_id: operationId });
      expect(waiting.questions).toEqual([
        { id: city, text: 'Which city?', asked_at: expect.any(String), asked_by: { type: 'agent', id: scribe } },
        { id: people, text: 'How many people?', asked_at: expect.any(String), asked_by: { type: 'agent', id: scribe } },
      ]);

      // The inbox lists both, oldest first; people of other spaces do not see them.
      const inbox = (await listOpenTaskQuestions(ctx().db, [general])).filter((open) => open.task_id === task.id);
      expect(inbox).toEqual(waiting.questions.map((question: unknown) => ({ task_id: task.id, task_title: 'Plan the offsite', space_id: general, assignee_agent_id: scribe, question })));
      expect((await listOpenTaskQuestions(ctx().db, [secret])).map((open) => open.task_id)).not.toContain(task.id);

      const first = await owner.callOk('answer_task', { task_id: task.id, question_id: city, answer: 'Lisbon' });
      expect(first.status).toBe('waiting');
      expect(first.questions[0]).toEqual({
        id: city,
        text: 'Which city?',
        asked_at: expect.any(String),
        asked_by: { type: 'agent', id: scribe },
        answer: 'Lisbon',
        answered_at: expect.any(String),
        answered_by: { type: 'person', id: ownerId },
      });
      const second = await owner.callOk('answer_task', { task_id: task.id, question_id: people, answer: '40' });
      expect(second.status).toBe('in_progress');
      expect((await listOpenTaskQuestions(ctx().db, [general])).map((open) => open.task_id)).not.toContain(task.id);
      // Each answer becomes a `type: answer` delivery to the operation that asked (delivery/deliveries.ts).
      let delivered: { question_id: string }[] = [];
      for (let i = 0; i < 100 && delivered.length < 2; i++) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        await settle();
        delivered = await rows<{ question_id: string }>(
          sql`SELECT content->'answer'->>'question_id' AS question_id FROM deliveries WHERE operation_id = ${operationId} AND type = 'answer'`,
        );
      }
      expect(delivered.map((row) => row.question_id).sort()).toEqual([city, people].sort());

      const again = await expectRefusedUnchanged(owner, 'answer_task', { task_id: task.id, question_id: city, answer: 'Porto' });
      expect(again).toMatchObject({ code: 'invalid_state', message: 'the question was already answered' });
      const otherTask = await owner.callOk('create_task', { space_id: general, title: 'Unrelated' });
      expect(await expectRefusedUnchanged(owner, 'answer_task', { task_id: otherTask.id, question_id: city, answer: 'x' })).toEqual({
        code: 'not_found',
        message: 'question not found',
      });

      const done = await completeTask(ctx().db, task.id, { result: { venue: 'Lisbon' }, operationId });
      expect(done).toMatchObject({ status: 'done', result: { venue: 'Lisbon' } });
      expect(done.progress.at(-1)).toMatchObject({ message: 'Done', operation_id: operationId });
    });

    it('only the assignee asks, and a finished task takes no questions, answers, progress or cancel', async () => {
      const task = await owner.callOk('create_task', { space_id: general, title: 'Order swag', assignee_agent_id: scribe });
      await expect(askTaskQuestion(ctx().db, task.id, { text: 'Sizes?', askedBy: sleepy })).rejects.toMatchObject({ code: 'not_found' });
      const open = await askTaskQuestion(ctx().db, task.id, { text: 'Which colours?', askedBy: scribe });
      // Completing while a question is open is the agent's call; the question can no longer be answered.
      await completeTask(ctx().db, task.id);
      const answer = await expectRefusedUnchanged(owner, 'answer_task', { task_id: task.id, question_id: open, answer: 'Blue' });
      expect(answer).toEqual({ code: 'invalid_state', message: 'the task is done, so it cannot take answers', details: { status: 'done', event: 'answer' } });
      const cancel = await expectRefusedUnchanged(owner, 'cancel_task', { task_id: task.id });
      expect(cancel).toEqual({ code: 'invalid_state', message: 'the task is done, so it cannot be cancelled', details: { status: 'done', event: 'cancel' } });
      await expect(askTaskQuestion(ctx().db, task.id, { text: 'More?', askedBy: scribe })).rejects.toMatchObject({
        code: 'invalid_state',
        message: 'the task is done, so it cannot take questions',
      });
      await expect(addTaskProgress(ctx().db, task.id, { message: 'late' })).rejects.toMatchObject({ code: 'invalid_state' });
      await expect(reopenTask(ctx().db, task.id, { error: { code: 'agent_failed', message: 'x' } })).rejects.toMatchObject({ code: 'invalid_state' });
      await expect(startTask(ctx().db, 'tsk_missing')).rejects.toMatchObject({ code: 'not_found' });
    });

    it('a failure puts the task back to open with the error as a progress event', async () => {
      const task = await owner.callOk('create_task', { space_id: general, title: 'Fix the printer', assignee_agent_id: scribe });
      await startTask(ctx().db, task.id);
      await expect(startTask(ctx().db, task.id)).rejects.toMatchObject({ code: 'invalid_state', message: 'the task is in_progress, so it cannot be started' });
      const reopened = await reopenTask(ctx().db, task.id, { error: { code: 'agent_failed', message: 'out of toner' } });
      expect(reopened.status).toBe('open');
      expect(reopened.progress.at(-1)).toMatchObject({ message: 'Failed (agent_failed): out of toner' });
    });
  });

  describe('cancel_task', () => {
    it('cancels the task, records the reason and cancels the agent’s work under way', async () => {
      const task = await owner.callOk('create_task', { space_id: general, title: 'Renew the domain', assignee_agent_id: scribe });
      const operationId = task.progress[0].operation_id;
      // This process's worker may have claimed the run before settle() looks: wait for it to be under way.
      await settle();
      await expect.poll(async () => (await owner.callOk('get_operation', { operation_id: operationId })).status, { timeout: 10_000 }).toBe('running');
      const cancelled = await owner.callOk('cancel_task', { task_id: task.id, reason: 'We let it lapse' });
      expect(cancelled.status).toBe('cancelled');
      expect(cancelled.progress.at(-1)).toEqual({ at: expect.any(String), message: 'Cancelled: We let it lapse' });
      expect((await owner.callOk('get_operation', { operation_id: operationId })).status).toBe('cancelled');
      const again = await expectRefusedUnchanged(owner, 'cancel_task', { task_id: task.id });
      expect(again).toEqual({ code: 'invalid_state', message: 'the task is cancelled, so it cannot be cancelled', details: { status: 'cancelled', event: 'cancel' } });
      await expect(completeTask(ctx().db, task.id)).rejects.toMatchObject({ code: 'invalid_state' });
    });

    it('stops a schedule: no next run, and nothing fires later', async () => {
      const task = await owner.callOk('create_task', { space_id: general, title: 'Daily standup notes', assignee_agent_id: scribe, schedule: { cron: '0 10 * * *', timezone: 'Europe/Berlin' } });
      const cancelled = await owner.callOk('cancel_task', { task_id: task.id });
      expect(cancelled.next_run_at).toBeUndefined();
      expect(cancelled.schedule).toEqual({ cron: '0 10 * * *', timezone: 'Europe/Berlin' });
      await runDueTasks(ctx(), new Date('2030-01-01T00:00:00Z'));
      expect(await owner.callOk('get_task', { task_id: task.id })).toEqual(cancelled);
      expect(await operationsOf(task.id)).toEqual([]);
    });
  });

  describe('scheduled runs', () => {
    it('fires a one-shot run once: a progress event and a task operation for the run, without a client', async () => {
      const task = await owner.callOk('create_task', {
        space_id: general,
        title: 'Publish the Q3 numbers',
        assignee_agent_id: scribe,
        schedule: { at: '2031-07-01T09:30', timezone: 'Europe/Berlin' },
      });
      expect(task.next_run_at).toBe('2031-07-01T07:30:00.000000Z');
      await runDueTasks(ctx(), new Date('2031-07-01T07:29:59Z'));
      expect(await operationsOf(task.id)).toEqual([]);
      await runDueTasks(ctx(), new Date('2031-07-01T07:30:00Z'));
      await runDueTasks(ctx(), new Date('2031-07-02T00:00:00Z'));
      const operations = await operationsOf(task.id);
      expect(operations).toEqual([
        { id: expect.any(String), person_id: ownerId, client_id: null, agent_id: scribe, space_id: general, input: { task_id: task.id, run_at: '2031-07-01T07:30:00.000Z' } },
      ]);
      const fired = await owner.callOk('get_task', { task_id: task.id });
      expect(fired.next_run_at).toBeUndefined();
      expect(fired.progress).toEqual([
        { at: expect.any(String), message: 'Scheduled run at 2031-07-01T09:30:00 Europe/Berlin: sent to its agent', operation_id: operations[0].id },
      ]);
      await settle();
      expect(ran.filter((operation) => (operation.input as { task_id: string }).task_id === task.id)).toHaveLength(1);
    });

    it('skips a run while the last one is still in progress, and opens a done task again for the next', async () => {
      const task = await owner.callOk('create_task', { space_id: general, title: 'Nightly backup check', assignee_agent_id: scribe, schedule: { cron: '0 3 * * *', timezone: 'UTC' } });
      await runDueTasks(ctx(), new Date('2032-01-01T03:00:00Z'));
      await startTask(ctx().db, task.id);
      await runDueTasks(ctx(), new Date('2032-01-02T03:00:00Z'));
      let seen = await owner.callOk('get_task', { task_id: task.id });
      expect(seen.status).toBe('in_progress');
      expect(seen.next_run_at).toBe('2032-01-03T03:00:00.000000Z');
      expect(seen.progress.at(-1).message).toBe('Scheduled run at 2032-01-02T03:00:00 UTC skipped: the task is still in progress');
      expect(await operationsOf(task.id)).toHaveLength(1);

      await completeTask(ctx().db, task.id);
      await runDueTasks(ctx(), new Date('2032-01-03T03:00:00Z'));
      seen = await owner.callOk('get_task', { task_id: task.id });
      expect(seen.status).toBe('open');
      expect(seen.progress.at(-1).message).toBe('Scheduled run at 2032-01-03T03:00:00 UTC: sent to its agent');
      // The first run fired late (no process ran the clock forward): it is the one due when the task was made.
      const firstDue = new Date(task.next_run_at).toISOString();
      expect((await operationsOf(task.id)).map((operation) => operation.input.run_at)).toEqual([firstDue, '2032-01-03T03:00:00.000Z']);
    });

    it('a run that fails stays due and does not hold up the other runs', async () => {
      const broken = await owner.callOk('create_task', { space_id: general, title: 'Broken schedule', schedule: { cron: '0 4 * * *', timezone: 'UTC' } });
      const healthy = await owner.callOk('create_task', { space_id: general, title: 'Healthy schedule', schedule: { cron: '0 4 * * *', timezone: 'UTC' } });
      // A stored schedule no longer valid (written behind the service's back) makes its run throw.
      await rows(sql`UPDATE tasks SET schedule = '{"cron": "not a cron", "timezone": "UTC"}'::jsonb WHERE id = ${broken.id}`);
      await runDueTasks(ctx(), new Date('2033-01-01T04:00:00Z'));
      expect((await owner.callOk('get_task', { task_id: healthy.id })).progress.at(-1).message).toMatch(/^Scheduled run at .* UTC is due$/);
      const stuck = await owner.callOk('get_task', { task_id: broken.id });
      expect(stuck.next_run_at).toBe(broken.next_run_at);
      expect(stuck.progress).toEqual([]);
      await owner.callOk('cancel_task', { task_id: broken.id });
    });

    it('keeps 02:30 Berlin right across the spring change: 03:00 on the day 02:30 is skipped, then 02:30 again', async () => {
      const task = await owner.callOk('create_task', { space_id: general, title: 'Rotate the keys', schedule: { cron: '30 2 * * *', timezone: 'Europe/Berlin' } });
      await runDueTasks(ctx(), new Date('2027-03-27T12:00:00Z'));
      expect((await owner.callOk('get_task', { task_id: task.id })).next_run_at).toBe('2027-03-28T01:00:00.000000Z');
      await runDueTasks(ctx(), new Date('2027-03-28T01:00:00Z'));
      const seen = await owner.callOk('get_task', { task_id: task.id });
      expect(seen.progress.at(-1).message).toBe('Scheduled run at 2027-03-28T03:00:00 Europe/Berlin is due');
      expect(seen.next_run_at).toBe('2027-03-29T00:30:00.000000Z');
    });

    it('keeps 09:00 New York right across the autumn change', async () => {
      const task = await owner.callOk('create_task', { space_id: general, title: 'Morning digest', schedule: { cron: '0 9 * * *', timezone: 'America/New_York' } });
      await runDueTasks(ctx(), new Date('2027-11-06T13:00:00Z'));
      expect((await owner.callOk('get_task', { task_id: task.id })).next_run_at).toBe('2027-11-07T14:00:00.000000Z');
      await runDueTasks(ctx(), new Date('2027-11-07T14:00:00Z'));
      const seen = await owner.callOk('get_task', { task_id: task.id });
      expect(seen.progress.at(-1).message).toBe('Scheduled run at 2027-11-07T09:00:00 America/New_York is due');
      expect(seen.next_run_at).toBe('2027-11-08T14:00:00.000000Z');
    });
  });

  describe('refuses bad input, naming the argument and writing nothing', () => {
    let task: { id: string };
    let clientAgent: string;
    beforeAll(async () => {
      task = await owner.callOk('create_task', { space_id: general, title: 'Target of bad input' });
      clientAgent = (await owner.callOk('service_context')).client.agent_id;
    });

    const long = (length: number) => 'x'.repeat(length);
    const at = (local: string, timezone = 'Europe/Berlin') => ({ at: local, timezone });
    const createCases: [string, (ids: { general: string; client: string; sleepy: string }) => Record<string, unknown>, string][] = [
      ['no arguments', () => ({}), 'space_id'],
      ['an empty space_id', () => ({ space_id: '', title: 'x' }), 'space_id'],
      ['no title', ({ general }) => ({ space_id: general }), 'title'],
      ['an empty title', ({ general }) => ({ space_id: general, title: '' }), 'title'],
      ['a blank title', ({ general }) => ({ space_id: general, title: '   ' }), 'title'],
      ['a title of 201 characters', ({ general }) => ({ space_id: general, title: long(201) }), 'title'],
      ['a title that is a number', ({ general }) => ({ space_id: general, title: 42 }), 'title'],
      ['a description of 20,001 characters', ({ general }) => ({ space_id: general, title: 'x', description: long(20_001) }), 'description'],
      ['an unknown assignee', ({ general }) => ({ space_id: general, title: 'x', assignee_agent_id: 'agt_nobody' }), 'assignee_agent_id'],
      ['a connected client as assignee', ({ general, client }) => ({ space_id: general, title: 'x', assignee_agent_id: client }), 'assignee_agent_id'],
      ['a disabled assignee', ({ general, sleepy }) => ({ space_id: general, title: 'x', assignee_agent_id: sleepy }), 'assignee_agent_id'],
      ['a schedule without timezone', ({ general }) => ({ space_id: general, title: 'x', schedule: { at: '2031-01-01T09:00' } }), 'schedule.timezone'],
      ['a schedule in an unknown zone', ({ general }) => ({ space_id: general, title: 'x', schedule: at('2031-01-01T09:00', 'Berlin') }), 'schedule.timezone'],
      ['a one-shot time in the past', ({ general }) => ({ space_id: general, title: 'x', schedule: at('2020-01-01T09:00') }), 'schedule.at'],
      ['a one-shot time the clocks skip', ({ general }) => ({ space_id: general, title: 'x', schedule: at('2031-03-30T02:30') }), 'schedule.at'],
      ['a one-shot time in UTC', ({ general }) => ({ space_id: general, title: 'x', schedule: at('2031-01-01T09:00:00Z') }), 'schedule.at'],
      ['a bad cron', ({ general }) => ({ space_id: general, title: 'x', schedule: { cron: 'every day', timezone: 'UTC' } }), 'schedule.cron'],
      ['a cron that never fires', ({ general }) => ({ space_id: general, title: 'x', schedule: { cron: '0 0 31 2 *', timezone: 'UTC' } }), 'schedule.cron'],
      ['both at and cron', ({ general }) => ({ space_id: general, title: 'x', schedule: { at: '2031-01-01T09:00', cron: '0 9 * * *', timezone: 'UTC' } }), 'schedule'],
      ['a schedule as text', ({ general }) => ({ space_id: general, title: 'x', schedule: 'daily at 9' }), 'schedule'],
      ['an unknown argument', ({ general }) => ({ space_id: general, title: 'x', priority: 'high' }), 'priority'],
      ['an empty idempotency_key', ({ general }) => ({ space_id: general, title: 'x', idempotency_key: '' }), 'idempotency_key'],
      ['an idempotency_key of 201 characters', ({ general }) => ({ space_id: general, title: 'x', idempotency_key: long(201) }), 'idempotency_key'],
    ];

    it.each(createCases)('create_task with %s', async (_name, args, field) => {
      const error = await expectRefusedUnchanged(owner, 'create_task', args({ general, client: clientAgent, sleepy }));
      expectNamed(error, field);
    });

    it.each([
      ['list_tasks', { status: 'stalled' }, 'status'],
      ['list_tasks', { limit: 0 }, 'limit'],
      ['list_tasks', { limit: 51 }, 'limit'],
      ['list_tasks', { limit: 2.5 }, 'limit'],
      ['list_tasks', { limit: '10' }, 'limit'],
      ['list_tasks', { cursor: 'yesterday' }, 'cursor'],
      ['list_tasks', { cursor: '2026-02-30T00:00:00Z' }, 'cursor'],
      ['list_tasks', { space_id: '' }, 'space_id'],
      ['list_tasks', { assignee_agent_id: '' }, 'assignee_agent_id'],
      ['list_tasks', { query: 'x' }, 'query'],
      ['get_task', {}, 'task_id'],
      ['get_task', { task_id: '' }, 'task_id'],
      ['get_task', { task_id: long(201) }, 'task_id'],
      ['answer_task', { question_id: 'q_x', answer: 'x' }, 'task_id'],
      ['answer_task', { task_id: 'TASK', answer: 'x' }, 'question_id'],
      ['answer_task', { task_id: 'TASK', question_id: 'q_x' }, 'answer'],
      ['answer_task', { task_id: 'TASK', question_id: 'q_x', answer: ' ' }, 'answer'],
      ['answer_task', { task_id: 'TASK', question_id: 'q_x', answer: long(10_001) }, 'answer'],
      ['cancel_task', {}, 'task_id'],
      ['cancel_task', { task_id: 'TASK', reason: '' }, 'reason'],
      ['cancel_task', { task_id: 'TASK', reason: long(2001) }, 'reason'],
      ['cancel_task', { task_id: 'TASK', idempotency_key: '' }, 'idempotency_key'],
    ])('%s with %j', async (tool, args, field) => {
      const withTask = Object.fromEntries(Object.entries(args).map(([key, value]) => [key, value === 'TASK' ? task.id : value]));
      expectNamed(await expectRefusedUnchanged(owner, tool, withTask), field);
    });

    it('an unknown task or question is not_found', async () => {
      expect(await expectRefusedUnchanged(owner, 'get_task', { task_id: 'tsk_unknown' })).toEqual({ code: 'not_found', message: 'task not found' });
      expect(await expectRefusedUnchanged(owner, 'answer_task', { task_id: task.id, question_id: 'q_unknown', answer: 'x' })).toEqual({
        code: 'not_found',
        message: 'question not found',
      });
    });

    function expectNamed(error: { code: string; message: string; details?: any }, field: string) {
      expect(error.code).toBe('invalid_request');
      expect(error.details.issues.map((issue: { field: string }) => issue.field)).toContain(field === '' ? 'schedule' : field);
      expect(error.message).toContain(field);
    }
  });

  describe('who may call', () => {
    it('refuses every task tool with no_space for a person without spaces', async () => {
      const nomad = await connectOrgMcp(org, { email: NOMAD.email, password: NOMAD.password });
      try {
        const task = await owner.callOk('create_task', { space_id: general, title: 'Not for nomads' });
        for (const [tool, args] of [
          ['create_task', { space_id: general, title: 'x' }],
          ['list_tasks', {}],
          ['get_task', { task_id: task.id }],
          ['answer_task', { task_id: task.id, question_id: 'q_x', answer: 'x' }],
          ['cancel_task', { task_id: task.id }],
        ] as const) {
          const error = await expectRefusedUnchanged(nomad, tool, args);
          expect(error.code, tool).toBe('no_space');
          expect(error.message).toContain('stop');
        }
      } finally {
        await nomad.close();
      }
    });

    it('needs task:write to create and task:read to read (403 insufficient_scope)', async () => {
      const { accessToken } = await connectClient(org, { scopes: ['task:read'] });
      const headers = await openMcpSession(org, accessToken);
      const call = (name: string, args: Record<string, unknown>) =>
        postMcp(org, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } }, headers);
      const refused = await call('create_task', { space_id: general, title: 'x' });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('www-authenticate')).toContain('scope="task:write"');
      expect(refused.json).toMatchObject({ error: 'insufficient_scope', required_scope: 'task:write' });
      const listed = await call('list_tasks', {});
      expect(listed.status).toBe(200);
      expect(listed.json.result.isError).toBeUndefined();
    });
  });

  describe('searchTasks (the assistant’s retrieval)', () => {
    let billing: { id: string };
    beforeAll(async () => {
      billing = await owner.callOk('create_task', {
        space_id: general,
        title: 'Deploy the billing service',
        description: 'Roll out the new invoices to production after the freeze.',
      });
      await owner.callOk('create_task', { space_id: general, title: 'Quarterly tax report', description: 'Collect receipts' });
      await other.callOk('create_task', { space_id: secret, title: 'Deploy the secret billing thing' });
    });

    it('ranks full-text matches (stemmed) in the given spaces only', async () => {
      const hits = await searchTasks(ctx().db, [general], 'deploying billing', 10);
      expect(hits.map((hit) => hit.id)).toEqual([billing.id]);
      expect(hits[0]).toEqual({
        id: billing.id,
        space_id: general,
        title: 'Deploy the billing service',
        status: 'open',
        assignee_agent_id: null,
        created_by: { type: 'person', id: ownerId },
        created_at: expect.any(String),
        updated_at: expect.any(String),
        excerpt: expect.stringContaining('invoices'),
        rank: expect.any(Number),
      });
      expect((await searchTasks(ctx().db, [general], 'invoice', 10)).map((hit) => hit.id)).toEqual([billing.id]);
      expect(await searchTasks(ctx().db, [], 'billing', 10)).toEqual([]);
      expect(await searchTasks(ctx().db, [general], '   ', 10)).toEqual([]);
    });

    it('falls back to trigrams for partial words', async () => {
      expect((await searchTasks(ctx().db, [general], 'billin', 10)).map((hit) => hit.id)).toContain(billing.id);
    });
  });

  // -------------------------------------------------------------------------------------------------------

  async function settle(): Promise<void> {
    await org.service.jobs.runDue();
  }

  async function countTasks(title: string): Promise<number> {
    const [row] = await rows<{ n: number }>(sql`SELECT count(*)::int AS n FROM tasks WHERE title = ${title}`);
    return Number(row.n);
  }

  async function operationsOf(taskId: string) {
    return rows<{ id: string; person_id: string; client_id: string | null; agent_id: string; space_id: string; input: any }>(
      sql`SELECT id, person_id, client_id, agent_id, space_id, input FROM operations WHERE kind = 'task' AND input->>'task_id' = ${taskId} ORDER BY created_at`,
    );
  }

  /** Everything a task tool could write. */
  async function fingerprint(): Promise<string> {
    await settle();
    return JSON.stringify(
      await rows(sql`
        SELECT (SELECT count(*) FROM tasks) AS tasks, (SELECT max(updated_at)::text FROM tasks) AS updated,
               (SELECT string_agg(id || ':' || status || ':' || coalesce(next_run_at::text, ''), ',' ORDER BY id) FROM tasks) AS states,
               (SELECT count(*) FROM task_progress) AS progress, (SELECT count(*) FROM task_questions) AS questions,
               (SELECT count(answer) FROM task_questions) AS answers,
               (SELECT string_agg(id || ':' || status, ',' ORDER BY id) FROM operations) AS operations,
               (SELECT count(*) FROM idempotency_keys) AS keys,
               (SELECT count(*) FROM jobs WHERE kind = 'org.task-answer') AS answer_jobs`),
    );
  }

  async function expectRefusedUnchanged(mcp: OrgMcp, tool: string, args: Record<string, unknown>) {
    const before = await fingerprint();
    const error = await mcp.callError(tool, args);
    expect(await fingerprint()).toBe(before);
    return error;
  }
});
