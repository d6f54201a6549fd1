/**
 * The console's home for a signed-in person (DESIGN 4.6): what needs them now (decisions awaiting them, questions
 * agents asked in their spaces), operations in progress and those that failed in the last day, each budgeted
 * agent's use of its month, and the latest activity — each section linking to its whole page.
 */
import type { ComponentChildren, VNode } from 'preact';
import { listActivity } from '../activity/records.js';
import { budgetedAgents } from '../agents/usage.js';
import { decisionsFor } from '../decisions/records.js';
import { operationsOverview, type OverviewOperation } from '../operations/overview.js';
import { listOpenTaskQuestions } from '../tasks/person.js';
import type { Viewer } from './console.js';
import { formatTime } from './format.js';
import { SubjectLink } from './parts.js';
import type { WebContext } from './respond.js';

const SHOWN = 5;

export async function consoleHome(web: WebContext, viewer: Viewer): Promise<ComponentChildren> {
  const { db } = web.ctx;
  const { scope, person } = viewer;
  const [decisions, questions, operations, budgets, activity] = await Promise.all([
    decisionsFor(db, { person, clientId: null }, { status: 'pending', limit: SHOWN + 1 }),
    listOpenTaskQuestions(db, scope.spaceIds, SHOWN + 1),
    operationsOverview(db, scope),
    budgetedAgents(db),
    listActivity(db, scope.all ? { all: true } : { all: false, personId: scope.personId, spaceIds: scope.spaceIds }, {}, { limit: 8 }),
  ]);
  return (
    <>
      <h1>Hello, {person.name}</h1>
      <section aria-labelledby="needs-you">
        <h2 id="needs-you">Needs you now</h2>
        {decisions.length === 0 && questions.length === 0 ? (
          <p>Nothing is waiting for you.</p>
        ) : (
          <ul>
            {decisions.slice(0, SHOWN).map((decision) => (
              <li key={decision.id}>
                <a href={`/inbox/decisions/${encodeURIComponent(decision.id)}`}>Decide</a>: {decision.agent.name} asks to run <strong>{decision.action.capability_name}</strong>{' '}
                <span class={`badge ${decision.risk}`}>{decision.risk} risk</span> · expires {formatTime(decision.expires_at)}
              </li>
            ))}
            {questions.slice(0, SHOWN).map((question) => (
              <li key={question.question.id}>
                <a href={`/inbox#answer-${encodeURIComponent(question.question.id)}`}>Answer</a>: on <a href={`/tasks/${encodeURIComponent(question.task_id)}`}>{question.task_title}</a>, “{question.question.text}”
              </li>
            ))}
            {decisions.length > SHOWN || questions.length > SHOWN ? (
              <li>
                <a href="/inbox">More in your inbox</a>
              </li>
            ) : null}
          </ul>
        )}
      </section>
      <div class="cards">
        <OperationsCard title="In progress" id="in-progress" rows={operations.inProgress} more="/operations" empty="No operation is running or waiting." />
        <OperationsCard title="Failed in the last day" id="failed" rows={operations.failed} more="/operations?status=failed" empty="No operation failed in the last day." />
      </div>
      <section aria-labelledby="budgets">
        <h2 id="budgets">Budgets this month</h2>
        {budgets.length === 0 ? (
          <p>No agent has a monthly budget.</p>
        ) : (
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Used</th>
                <th scope="col">Of</th>
              </tr>
            </thead>
            <tbody>
              {budgets.map((agent) => (
                <tr key={agent.id}>
                  <td data-label="Agent">
                    <a href={`/agents/${encodeURIComponent(agent.id)}`}>{agent.name}</a>
                  </td>
                  <td data-label="Used">
                    <meter min={0} max={agent.budget ?? 0} low={(agent.budget ?? 0) * 0.8} high={(agent.budget ?? 0) * 0.95} optimum={0} value={agent.used} aria-label={`${agent.name}: ${agent.used} of ${agent.budget} used`} />{' '}
                    {agent.used} ({agent.budget ? Math.round((agent.used / agent.budget) * 100) : 0} %)
                  </td>
                  <td data-label="Of">{agent.budget}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="latest">
        <h2 id="latest">Latest activity</h2>
        {activity.rows.length === 0 ? (
          <p>Nothing has happened yet.</p>
        ) : (
          <ul>
            {activity.rows.map((entry) => (
              <li key={entry.seq}>
                <small>{formatTime(entry.at)}</small> <span class="badge">{entry.kind}</span> {entry.summary}
                <SubjectLink entry={{ subject: entry.subject, operationId: null, capabilityId: null }} />
              </li>
            ))}
          </ul>
        )}
        <p>
          <a href="/activity">All activity</a>
        </p>
      </section>
      <section aria-labelledby="yours">
        <h2 id="yours">Your connections and settings</h2>
        <ul>
          <li>
            <a href="/connections">Connected applications</a>: the AI clients you allowed, and their permissions
          </li>
          <li>
            <a href="/rules">Learned rules</a>: what you allowed agents to do without asking again
          </li>
          <li>
            <a href="/connect">Connect a client</a>: set up Claude, Cursor, VS Code or your own agent, ready to paste
          </li>
          <li>
            <a href="/docs">MCP tools</a>: what an AI client connected to this organization can do
          </li>
          <li>
            <a href="/account">Your account</a>: your name, password and email notifications
          </li>
        </ul>
      </section>
    </>
  );
}

function OperationsCard({ title, id, rows, more, empty }: { title: string; id: string; rows: OverviewOperation[]; more: string; empty: string }): VNode {
  return (
    <article aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {rows.length === 0 ? (
        <p>{empty}</p>
      ) : (
        <ul>
          {rows.map((row) => (
            <li key={row.id}>
              {row.about === null ? (
                <a href={`/operations/${encodeURIComponent(row.id)}`}>{row.kind}</a>
              ) : (
                <>
                  {row.kind} <a href={`/operations/${encodeURIComponent(row.id)}`}>{row.about}</a>
                </>
              )}{' '}
              <span class={`badge ${row.status}`}>{row.status}</span>
              {row.agentName ? ` · ${row.agentName}` : ''}
              {row.spaceName ? ` · ${row.spaceName}` : ''} · <small>{formatTime(row.createdAt)}</small>
              {row.error ? <div class="muted">{row.error.message}</div> : null}
            </li>
          ))}
        </ul>
      )}
      <a href={more}>All of them</a>
    </article>
  );
}
