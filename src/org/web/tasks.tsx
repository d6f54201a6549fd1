/**
 * GET /tasks and /tasks/:id (DESIGN 4.6, issue 19 item 4). The board has a column per status (tasks/states.ts),
 * newest first, filtered by space and assignee; a column's "more" link lists that status alone, paged. A task's
 * page shows its schedule with the next runs in the schedule's own IANA zone, its questions and answers, its
 * progress and the operations that worked on it. Only tasks of the viewer's spaces exist here (every space for an
 * owner or admin): any other id is answered exactly as an unknown one. "New task" and "Cancel this task" are
 * task-forms.tsx's, offered in the person's own spaces.
 */
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { listReachableAgents, type AgentSummary } from '../agents/records.js';
import { id as fieldId, dateCursor } from '../fields.js';
import { namesOfPeople } from '../people/directory.js';
import type { Space } from '../spaces/records.js';
import { getTask, listTaskRows } from '../tasks/person.js';
import type { TaskRecord } from '../tasks/records.js';
import { listTaskOperations, type TaskOperation } from '../tasks/runs.js';
import { instantToLocal, upcomingRuns, type Schedule } from '../tasks/schedules.js';
import { TASK_STATUSES, taskAllows, type TaskRow, type TaskStatus } from '../tasks/states.js';
import { consolePage } from './console.js';
import { CancelTaskForm } from './task-forms.js';
import { AnySelect, Body, optionalField, pageHref, Pager, spaceNamer, Time, visibleSpaces } from './parts.js';
import type { WebContext } from './respond.js';

/** Tasks per column on the board; a column alone lists a page of LIST_SIZE. */
const COLUMN_SIZE = 10;
const LIST_SIZE = 50;
/** Runs shown of a recurring schedule. */
const RUNS_SHOWN = 5;

const STATUS_NAMES: Record<TaskStatus, string> = {
  open: 'Open',
  in_progress: 'In progress',
  waiting: 'Waiting for a person',
  done: 'Done',
  cancelled: 'Cancelled',
};

const boardQuery = z.object({
  space: optionalField(fieldId()),
  assignee: optionalField(fieldId()),
  status: optionalField(z.enum(TASK_STATUSES)),
  cursor: optionalField(dateCursor()),
});
type BoardQuery = z.output<typeof boardQuery>;

const noQuery = z.object({});

export function registerTaskPages(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;

  consolePage(app, web, '/tasks', boardQuery, async (viewer, { query }) => {
    const [spaces, agents] = await Promise.all([visibleSpaces(db, viewer.scope), listReachableAgents(db)]);
    const caller = { spaceIds: spaces.map((space) => space.id) };
    const filter = { space_id: query.space, assignee_agent_id: query.assignee };
    const statuses = query.status ? [query.status] : TASK_STATUSES;
    const limit = query.status ? LIST_SIZE : COLUMN_SIZE;
    const columns = await Promise.all(statuses.map((status) => listTaskRows(db, { ...filter, status, limit, cursor: query.cursor }, caller)));
    const names = { space: spaceNamer(spaces), agent: agentNamer(agents) };
    const filters = { space: query.space, assignee: query.assignee };
    return {
      title: 'Tasks',
      body: (
        <>
          <h1>Tasks</h1>
          {viewer.scope.spaceIds.length > 0 ? (
            <p>
              <a href="/tasks/new" role="button">
                New task
              </a>
            </p>
          ) : null}
          <TaskFilters spaces={spaces} agents={agents} query={query} />
          {query.status ? (
            <p>
              <a href={pageHref('/tasks', { ...filters })}>The whole board</a>
            </p>
          ) : null}
          <div class="board">
            {statuses.map((status, index) => (
              <section key={status} aria-labelledby={`column-${status}`}>
                <h2 id={`column-${status}`}>{STATUS_NAMES[status]}</h2>
                {columns[index].rows.length === 0 ? (
                  <p class="muted">None.</p>
                ) : (
                  <ul>
                    {columns[index].rows.map((task) => (
                      <TaskCard key={task.id} task={task} spaceName={names.space} agentName={names.agent} />
                    ))}
                  </ul>
                )}
                {query.status ? null : columns[index].next_cursor ? <a href={pageHref('/tasks', { ...filters, status })}>More {STATUS_NAMES[status].toLowerCase()} tasks</a> : null}
              </section>
            ))}
          </div>
          {query.status ? <Pager path="/tasks" query={{ ...filters, status: query.status }} cursor={query.cursor} next={columns[0].next_cursor} label="Tasks" /> : null}
        </>
      ),
    };
  });

  consolePage<typeof noQuery, { id: string }>(app, web, '/tasks/:id', noQuery, async (viewer, { params }) => {
    const spaces = await visibleSpaces(db, viewer.scope);
    const task = await getTask(db, params.id, { spaceIds: spaces.map((space) => space.id) });
    const [agents, operations, people] = await Promise.all([
      listReachableAgents(db),
      listTaskOperations(db, task.id),
      namesOfPeople(db, [
        ...(task.created_by.type === 'person' ? [task.created_by.id] : []),
        ...task.questions.flatMap((question) => (question.answered_by ? [question.answered_by.id] : [])),
      ]),
    ]);
    const agentName = agentNamer(agents);
    return {
      title: task.title,
      body: (
        <>
          <p>
            <a href="/tasks">Tasks</a>
          </p>
          <h1>{task.title}</h1>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <span class={`badge ${task.status}`}>{STATUS_NAMES[task.status]}</span>
            </dd>
            <dt>Space</dt>
            <dd>{spaceNamer(spaces)(task.space_id)}</dd>
            <dt>Assigned to</dt>
            <dd>{task.assignee_agent_id ? <a href={`/agents/${encodeURIComponent(task.assignee_agent_id)}`}>{agentName(task.assignee_agent_id)}</a> : 'nobody'}</dd>
            <dt>Created by</dt>
            <dd>{task.created_by.type === 'person' ? (people.get(task.created_by.id) ?? task.created_by.id) : agentName(task.created_by.id)}</dd>
            <dt>Created</dt>
            <dd>
              <Time value={task.created_at} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <Time value={task.updated_at} />
            </dd>
          </dl>
          {task.description ? <Body text={task.description} /> : null}
          <ScheduleSection task={task} />
          <Questions task={task} agentName={agentName} people={people} />
          <Progress task={task} />
          <Operations operations={operations} />
          {taskAllows(task.status, 'cancel') && viewer.scope.spaceIds.includes(task.space_id) ? <CancelTaskForm task={task} csrf={viewer.csrf} /> : null}
        </>
      ),
    };
  });
}

function TaskFilters({ spaces, agents, query }: { spaces: Space[]; agents: AgentSummary[]; query: BoardQuery }): VNode {
  return (
    <form class="filters" method="get" action="/tasks">
      <AnySelect name="space" label="Space" anyLabel="All your spaces" value={query.space} options={spaces.map((space) => ({ value: space.id, label: space.name }))} />
      <AnySelect name="assignee" label="Assigned to" anyLabel="Anyone" value={query.assignee} options={agents.map((agent) => ({ value: agent.id, label: agent.name }))} />
      {query.status ? <input type="hidden" name="status" value={query.status} /> : null}
      <button type="submit">Filter</button>
    </form>
  );
}

function TaskCard({ task, spaceName, agentName }: { task: TaskRow; spaceName: (id: string) => string; agentName: (id: string) => string }): VNode {
  return (
    <li>
      <a href={`/tasks/${task.id}`}>{task.title}</a>
      <br />
      <small>
        {spaceName(task.spaceId)}
        {task.assigneeAgentId ? ` · ${agentName(task.assigneeAgentId)}` : ''}
        {task.schedule && task.nextRunAt ? ` · next run ${instantToLocal(new Date(task.nextRunAt), task.schedule.timezone).replace('T', ' ')} ${task.schedule.timezone}` : ''}
      </small>
    </li>
  );
}

/** The schedule as written, and its next runs as the scheduler will fire them, in the schedule's zone. */
function ScheduleSection({ task }: { task: TaskRecord }): VNode {
  const schedule: Schedule | undefined = task.schedule;
  if (!schedule) {
    return (
      <section aria-labelledby="schedule">
        <h2 id="schedule">Schedule</h2>
        <p>Not scheduled.</p>
      </section>
    );
  }
  // The stored next run is the one the scheduler will fire; the later ones follow it.
  const next = task.next_run_at ? new Date(task.next_run_at) : null;
  const runs = next ? [next, ...upcomingRuns(schedule, next, RUNS_SHOWN - 1)] : [];
  return (
    <section aria-labelledby="schedule">
      <h2 id="schedule">Schedule</h2>
      <dl class="facts">
        <dt>{'cron' in schedule ? 'Repeats' : 'Runs once at'}</dt>
        <dd>
          <code>{'cron' in schedule ? schedule.cron : schedule.at}</code>
        </dd>
        <dt>Time zone</dt>
        <dd>{schedule.timezone}</dd>
      </dl>
      {runs.length === 0 ? (
        <p>No runs left.</p>
      ) : (
        <>
          <h3>Next runs</h3>
          <ol>
            {runs.map((run) => (
              <li key={run.toISOString()}>
                {instantToLocal(run, schedule.timezone).replace('T', ' ')} {schedule.timezone} <small>(<Time value={run.toISOString()} />)</small>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}

function Questions({ task, agentName, people }: { task: TaskRecord; agentName: (id: string) => string; people: Map<string, string> }): VNode {
  return (
    <section aria-labelledby="questions">
      <h2 id="questions">Questions</h2>
      {task.questions.length === 0 ? (
        <p>No questions.</p>
      ) : (
        <ol class="timeline">
          {task.questions.map((question) => (
            <li key={question.id}>
              <strong>{question.text}</strong>
              <br />
              <small>
                asked by {question.asked_by ? agentName(question.asked_by.id) : 'its agent'}, <Time value={question.asked_at} />
              </small>
              <br />
              {question.answer !== undefined ? (
                <>
                  Answer: {question.answer}
                  <br />
                  <small>
                    by {question.answered_by ? (people.get(question.answered_by.id) ?? question.answered_by.id) : 'a person'}, <Time value={question.answered_at} />
                  </small>
                </>
              ) : (
                <>
                  Not answered yet: <a href={`/inbox#answer-${encodeURIComponent(question.id)}`}>answer it in the inbox</a>.
                </>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function Progress({ task }: { task: TaskRecord }): VNode {
  return (
    <section aria-labelledby="progress">
      <h2 id="progress">Progress</h2>
      {task.progress.length === 0 ? (
        <p>Nothing happened yet.</p>
      ) : (
        <ol class="timeline">
          {task.progress.map((event, index) => (
            <li key={index}>
              <Time value={event.at} />: {event.message}
              {event.percent !== undefined ? ` (${event.percent}%)` : ''}
              {event.operation_id ? (
                <>
                  {' '}
                  <small>
                    in <a href={`/operations/${event.operation_id}`}>{event.operation_id}</a>
                  </small>
                </>
              ) : null}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function Operations({ operations }: { operations: TaskOperation[] }): VNode {
  return (
    <section aria-labelledby="operations">
      <h2 id="operations">Operations</h2>
      {operations.length === 0 ? (
        <p>No operation worked on this task yet.</p>
      ) : (
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Operation</th>
              <th scope="col">Status</th>
              <th scope="col">Started</th>
              <th scope="col">Finished</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {operations.map((operation) => (
              <tr key={operation.id}>
                <td data-label="Operation">
                  <a href={`/operations/${operation.id}`}>{operation.id}</a>
                </td>
                <td data-label="Status">
                  <span class={`badge ${operation.status}`}>{operation.status}</span>
                </td>
                <td data-label="Started">
                  <Time value={operation.created_at} />
                </td>
                <td data-label="Finished">
                  <Time value={operation.finished_at} />
                </td>
                <td data-label="Error">{operation.error ? `${operation.error.code}: ${operation.error.message}` : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function agentNamer(agents: readonly AgentSummary[]): (id: string) => string {
  const names = new Map(agents.map((agent) => [agent.id, agent.name]));
  return (id) => names.get(id) ?? id;
}
