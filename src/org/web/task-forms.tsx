/**
 * GET /tasks/new, POST /tasks and POST /tasks/:id/cancel (DESIGN 4.6): a person puts work in from the console as
 * an AI client does with create_task and cancel_task, through the same domain functions (tasks/person.ts). Anyone
 * signed in may post; where they may place or cancel work is the domain's rule, with the person's own spaces — an
 * owner or admin sees every space's tasks but places work only in theirs, as their clients do.
 */
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import type { Tx } from '../../platform/database.js';
import { listReachableAgents, type AgentSummary } from '../agents/records.js';
import { writeOrg } from '../changes.js';
import { orgErrors } from '../errors.js';
import { listSpacesOfPerson, type Space } from '../spaces/records.js';
import { cancelTask, createTask } from '../tasks/person.js';
import { cancelTaskInput, createTaskInput, type TaskCaller, type TaskRecord } from '../tasks/records.js';
import { anyoneSignedIn, consolePage, consolePost, type ConsolePage, type Viewer } from './console.js';
import { FormProblems, handleForm } from './manage.js';
import { noQuery } from './operations.js';
import { formField, type WebContext } from './respond.js';
import { SpaceSelect } from './parts.js';

/** The form's fields as people read them, by the domain's argument names its problems carry. */
const LABELS: Record<string, string> = {
  space_id: 'Space',
  title: 'Title',
  description: 'Description',
  assignee_agent_id: 'Assign to',
  schedule: 'Schedule',
  'schedule.at': 'Date and time',
  'schedule.cron': 'Cron expression',
  'schedule.timezone': 'Time zone',
};

const SCHEDULE_KINDS = ['none', 'at', 'cron'] as const;
type ScheduleKind = (typeof SCHEDULE_KINDS)[number];

/** The names the time zone field suggests; any zone the schedule accepts may be typed (schedules.ts). */
const TIME_ZONES = Intl.supportedValuesOf('timeZone');

/**
 * The form's fields as create_task's arguments, checked by create_task's own schema, so a refusal says what it would
 * say to a client: an empty choice is an absent argument, and only the chosen kind of schedule is sent.
 */
const taskForm = z.preprocess((body) => {
  const form = valuesFrom(body);
  const kind = form.schedule || 'none';
  return {
    space_id: form.space_id,
    title: form.title,
    description: form.description || undefined,
    assignee_agent_id: form.assignee_agent_id || undefined,
    schedule: kind === 'none' ? undefined : kind === 'at' || kind === 'cron' ? { [kind]: form[kind], timezone: form.timezone.trim() || undefined } : kind,
  };
}, createTaskInput);

/** The form's values as strings: what the person sent. */
type Values = Record<string, string>;

const FIELDS = ['space_id', 'title', 'description', 'assignee_agent_id', 'schedule', 'at', 'cron', 'timezone'];

function valuesFrom(body: unknown): Values {
  return Object.fromEntries(FIELDS.map((name) => [name, formField(body, name) ?? '']));
}

/** A person's task write, as the MCP tools make it: without a client, in the person's own spaces. */
function callerOf(viewer: Viewer): TaskCaller {
  return { personId: viewer.person.id, clientId: null, spaceIds: viewer.scope.spaceIds };
}

export function registerTaskForms(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;
  // Tasks are kept in no process's memory (read-cache.ts), so nothing is announced; the transaction is the one an
  // MCP call's idempotency key gives: the task, its activity entry and the operation delivering it commit together.
  const writingTasks = <T,>(work: (tx: Tx) => Promise<T>) => writeOrg(web.ctx, [], work);

  async function formPage(viewer: Viewer, values: Values, problems: string[] = []): Promise<ConsolePage> {
    const [spaces, agents] = await Promise.all([listSpacesOfPerson(db, viewer.person.id), listReachableAgents(db)]);
    return { title: 'New task', body: <TaskForm csrf={viewer.csrf} values={values} problems={problems} spaces={spaces} agents={agents} /> };
  }

  consolePage(app, web, '/tasks/new', noQuery, (viewer) => formPage(viewer, { schedule: 'none' }));

  consolePost(
    app,
    web,
    '/tasks',
    anyoneSignedIn,
    async (viewer, { body, reply }) =>
      handleForm({ schema: taskForm, body, labels: LABELS, reply, again: (problems) => formPage(viewer, valuesFrom(body), problems) }, async (input) => {
        const task = await writingTasks((tx) => createTask(web.ctx, tx, input, callerOf(viewer)));
        return reply.redirect(`/tasks/${task.id}`, 303);
      }),
  );

  consolePost<{ id: string }>(
    app,
    web,
    '/tasks/:id/cancel',
    anyoneSignedIn,
    async (viewer, { body, params, reply }) => {
      const parsed = cancelTaskInput.safeParse({ task_id: params.id, reason: formField(body, 'reason')?.trim() || undefined });
      if (!parsed.success) throw orgErrors.invalidRequest(`reason: ${parsed.error.issues[0].message}`);
      await writingTasks((tx) => cancelTask(tx, parsed.data, callerOf(viewer)));
      return reply.redirect(`/tasks/${encodeURIComponent(params.id)}`, 303);
    },
  );
}

/** Cancel this task, with an optional reason recorded as its progress event. */
export function CancelTaskForm({ task, csrf }: { task: TaskRecord; csrf: string }): VNode {
  return (
    <section aria-labelledby="cancel">
      <h2 id="cancel">Cancel</h2>
      <form method="post" action={`/tasks/${encodeURIComponent(task.id)}/cancel`}>
        <input type="hidden" name="csrf" value={csrf} />
        <label for="cancel-reason">Reason (optional)</label>
        <textarea id="cancel-reason" name="reason" rows={2} maxLength={2000} aria-describedby="cancel-help" />
        <small id="cancel-help">No further scheduled runs; the work its agent has under way is cancelled too.</small>
        <div class="actions">
          <button type="submit" class="secondary">
            Cancel this task
          </button>
        </div>
      </form>
    </section>
  );
}

function TaskForm({ csrf, values, problems, spaces, agents }: { csrf: string; values: Values; problems: string[]; spaces: Space[]; agents: AgentSummary[] }): VNode {
  const back = (
    <p>
      <a href="/tasks">Tasks</a>
    </p>
  );
  if (spaces.length === 0) {
    return (
      <>
        {back}
        <h1>New task</h1>
        <p>You belong to no space, so there is nowhere to place a task. An owner or admin can add you to a space on People.</p>
      </>
    );
  }
  const kind = (SCHEDULE_KINDS as readonly string[]).includes(values.schedule) ? (values.schedule as ScheduleKind) : 'none';
  return (
    <>
      {back}
      <h1>New task</h1>
      <form method="post" action="/tasks">
        <FormProblems problems={problems} />
        <input type="hidden" name="csrf" value={csrf} />
        <label for="task-space">Space</label>
        <SpaceSelect id="task-space" spaces={spaces} value={values.space_id} describedBy="task-space-help" />
        <small id="task-space-help">One of your spaces: the people in it see the task.</small>
        <label for="task-title">Title</label>
        <input id="task-title" name="title" value={values.title ?? ''} required maxLength={200} />
        <label for="task-description">Description</label>
        <textarea id="task-description" name="description" rows={4} maxLength={20000}>
          {values.description ?? ''}
        </textarea>
        <label for="task-assignee">Assign to</label>
        <select id="task-assignee" name="assignee_agent_id" aria-describedby="task-assignee-help">
          <option value="">Nobody</option>
          {agents.map((agent) => (
            <option key={agent.id} value={agent.id} selected={values.assignee_agent_id === agent.id}>
              {agent.name}
            </option>
          ))}
        </select>
        <small id="task-assignee-help">The agent is sent the task at once, or at each scheduled run.</small>
        <fieldset>
          <legend>Schedule</legend>
          <p class="check">
            <input type="radio" id="schedule-none" name="schedule" value="none" checked={kind === 'none'} />
            <label class="inline" for="schedule-none">
              Not scheduled
            </label>
          </p>
          <p class="check">
            <input type="radio" id="schedule-at" name="schedule" value="at" checked={kind === 'at'} />
            <label class="inline" for="schedule-at">
              Once, at the date and time below
            </label>
          </p>
          <p class="check">
            <input type="radio" id="schedule-cron" name="schedule" value="cron" checked={kind === 'cron'} />
            <label class="inline" for="schedule-cron">
              Repeatedly, on the cron expression below
            </label>
          </p>
          <label for="task-at">Date and time (once)</label>
          <input id="task-at" name="at" type="datetime-local" value={values.at ?? ''} aria-describedby="task-at-help" />
          <small id="task-at-help">The local time in the time zone below.</small>
          <label for="task-cron">Cron expression (repeatedly)</label>
          <input id="task-cron" name="cron" value={values.cron ?? ''} maxLength={200} autocomplete="off" aria-describedby="task-cron-help" />
          <small id="task-cron-help">Five fields (minute hour day-of-month month day-of-week) such as 0 9 * * 1-5, or @daily, @weekly, @monthly.</small>
          <label for="task-timezone">Time zone</label>
          {/* No placeholder: a zone shown greyed in the field would read as one already chosen (DESIGN 4.1: none is assumed). */}
          <input id="task-timezone" name="timezone" value={values.timezone ?? ''} maxLength={100} list="time-zones" autocomplete="off" aria-describedby="task-timezone-help" />
          <small id="task-timezone-help">An IANA time zone, such as Europe/Berlin or America/New_York: required for a schedule, none is assumed.</small>
          <datalist id="time-zones">
            {TIME_ZONES.map((zone) => (
              <option key={zone} value={zone} />
            ))}
          </datalist>
        </fieldset>
        <div class="actions">
          <button type="submit">Create task</button>
        </div>
      </form>
    </>
  );
}
