/** The task tools (DESIGN 4.3): create_task, list_tasks, get_task, answer_task, cancel_task, over org/tasks/. */
import { answerTaskInput, cancelTaskInput, createTaskInput, listTasksInput, taskIdInput, taskPage, taskRecord } from '../tasks/records.js';
import { defineOrgTool, type OrgToolCall } from './tools.js';
import { answerTask, listTasks, getTask, createTask, cancelTask } from '../tasks/person.js';

const caller = ({ principal, spaceIds }: OrgToolCall) => ({ personId: principal.personId, clientId: principal.clientId, spaceIds });

export const taskTools = [
  defineOrgTool({
    name: 'create_task',
    description:
      'Creates a tracked task in one of your spaces (space_id from service_context). Optionally assign it to an agent ' +
      '(assignee_agent_id from service_context agents): an unscheduled task is sent to it at once. Optionally schedule ' +
      'it, always with an IANA timezone (no default is assumed): {at: "2026-05-04T09:00", timezone: "Europe/Berlin"} ' +
      'runs once at that local time, {cron: "0 9 * * 1-5", timezone: "America/New_York"} runs repeatedly; each run is ' +
      'sent to the agent. Returns the task; follow it with get_task.',
    scope: 'task:write',
    needsSpace: true,
    effect: 'write',
    input: createTaskInput,
    output: taskRecord,
    annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: (args, call) => createTask(call.ctx, call.db, args, caller(call)),
  }),
  defineOrgTool({
    name: 'list_tasks',
    description:
      'Lists tasks in your spaces, newest first, optionally only one status, space or assignee. Returns ' +
      '{tasks, next_cursor}; pass next_cursor back as cursor for the next page (null means no more).',
    scope: 'task:read',
    needsSpace: true,
    effect: 'read',
    input: listTasksInput,
    output: taskPage,
    annotations: { idempotentHint: true, openWorldHint: false },
    run: (args, call) => listTasks(call.db, args, caller(call)),
  }),
  defineOrgTool({
    name: 'get_task',
    description:
      'Shows a task: status (open, in_progress, waiting for an answer, done, cancelled), schedule and next run, ' +
      'progress events, and questions its agent asked (answer open ones with answer_task).',
    scope: 'task:read',
    needsSpace: true,
    effect: 'read',
    input: taskIdInput,
    output: taskRecord,
    annotations: { idempotentHint: true, openWorldHint: false },
    run: ({ task_id }, call) => getTask(call.db, task_id, caller(call)),
  }),
  defineOrgTool({
    name: 'answer_task',
    description:
      "Answers a question a task's agent asked (question_id from the task's questions). The answer is recorded as " +
      'yours and sent to the agent; once no question is left open, a waiting task goes back to in_progress.',
    scope: 'task:write',
    needsSpace: true,
    effect: 'write',
    input: answerTaskInput,
    output: taskRecord,
    annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: (args, call) => answerTask(call.db, args, caller(call)),
  }),
  defineOrgTool({
    name: 'cancel_task',
    description:
      'Cancels a task that is not finished: no further scheduled runs, and its agent\'s work under way is cancelled. ' +
      'The reason, if given, is recorded as a progress event. A done or cancelled task cannot be cancelled.',
    scope: 'task:write',
    needsSpace: true,
    effect: 'write',
    input: cancelTaskInput,
    output: taskRecord,
    annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: false },
    run: (args, call) => cancelTask(call.db, args, caller(call)),
  }),
];
