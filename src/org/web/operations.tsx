/**
 * GET /operations and /operations/:id (DESIGN 4.4, 4.6): the work tools and agents started, newest first and
 * filtered, and one operation's whole story — its timeline, progress, the gate's verdict, the decision and who
 * resolved it, each delivery attempt, and its result or error. Thin: every read is its concept's.
 */
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { isIsoDate, toIso } from '../../platform/time.js';
import { listActivity, type ActivityEntry, type ActivityScope } from '../activity/records.js';
import { listAgentOverviews } from '../agents/overview.js';
import { listCapabilityOverviews } from '../capabilities/overview.js';
import { verdictsOfOperation, type VerdictView } from '../capabilities/verdicts.js';
import { findDecisionRecord, type DecisionRecord } from '../decisions/records.js';
import { deliveriesOfOperation, type DeliveryView } from '../delivery/history.js';
import { findOperationInScope, listOperations, type OperationCursor, type OperationListRow } from '../operations/list.js';
import { OPERATION_KINDS, OPERATION_STATUSES, type OperationRow } from '../operations/states.js';
import type { ReadScope } from '../read-scope.js';
import { listAllSpaces, listSpacesOfPerson } from '../spaces/records.js';
import { describeResolver, theClient } from './format.js';
import { AnySelect, Badge, BoundedJson, notFound, OlderLink, optionalField, optionalId, pageHref, Time } from './parts.js';
import { consolePage } from './console.js';
import type { WebContext } from './respond.js';

const PAGE_SIZE = 50;
/** The options a filter offers; more agents or capabilities than this are reached from their own pages. */
const MAX_OPTIONS = 100;
/** Activity entries shown on one operation's page. */
const MAX_ENTRIES = 100;

/** `<created_at ISO>|<id>` of the last row shown: the "Older" link's cursor. */
export const operationCursor = z
  .string()
  .max(300)
  .transform((value, issue): OperationCursor => {
    const bar = value.indexOf('|');
    const createdAt = value.slice(0, bar);
    const id = value.slice(bar + 1);
    if (bar < 0 || !isIsoDate(createdAt) || id.length === 0 || id.length > 200) {
      issue.addIssue({ code: 'custom', message: 'the cursor of the "Older" link' });
      return z.NEVER;
    }
    return { createdAt, id };
  });

const listQuery = z.object({
  status: optionalField(z.enum(OPERATION_STATUSES)),
  kind: optionalField(z.enum(OPERATION_KINDS)),
  agent: optionalId(),
  capability: optionalId(),
  space: optionalId(),
  before: optionalField(operationCursor),
});

export const cursorText = (next: OperationCursor): string => `${next.createdAt}|${next.id}`;

/** A page of one record takes no query. */
export const noQuery = z.object({});

function activityScope(scope: ReadScope): ActivityScope {
  return scope.all ? { all: true } : { all: false, personId: scope.personId, spaceIds: scope.spaceIds };
}

export function registerOperationPages(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;

  consolePage(app, web, '/operations', listQuery, async ({ scope, person }, { query }) => {
    const filter = { status: query.status, kind: query.kind, agentId: query.agent, capabilityId: query.capability, spaceId: query.space };
    const [page, agents, capabilities, spaces] = await Promise.all([
      listOperations(db, scope, filter, { limit: PAGE_SIZE, before: query.before }),
      listAgentOverviews(db, scope, { limit: MAX_OPTIONS }),
      listCapabilityOverviews(db, { limit: MAX_OPTIONS }),
      scope.all ? listAllSpaces(db, MAX_OPTIONS) : listSpacesOfPerson(db, person.id),
    ]);
    const filters = { status: query.status, kind: query.kind, agent: query.agent, capability: query.capability, space: query.space };
    const next = page.next ? pageHref('/operations', { ...filters, before: cursorText(page.next) }) : null;
    return {
      title: 'Operations',
      body: (
        <>
          <h1>Operations</h1>
          <form method="get" action="/operations" class="filters" role="search" aria-label="Filter operations">
            <AnySelect name="status" label="Status" value={query.status} options={OPERATION_STATUSES.map((value) => ({ value, label: value }))} />
            <AnySelect name="kind" label="Kind" value={query.kind} options={OPERATION_KINDS.map((value) => ({ value, label: value }))} />
            <AnySelect name="agent" label="Agent" value={query.agent} options={agents.rows.map((agent) => ({ value: agent.id, label: agent.name }))} />
            <AnySelect name="capability" label="Capability" value={query.capability} options={capabilities.rows.map((item) => ({ value: item.id, label: item.key }))} />
            <AnySelect name="space" label="Space" value={query.space} options={spaces.map((space) => ({ value: space.id, label: space.name }))} />
            <button type="submit">Filter</button>
          </form>
          {page.rows.length === 0 ? <p>No operations{Object.values(filters).some(Boolean) ? ' match these filters' : ' yet'}.</p> : <OperationTable rows={page.rows} />}
          <OlderLink next={next} />
        </>
      ),
    };
  });

  consolePage<typeof noQuery, { id: string }>(app, web, '/operations/:id', noQuery, async ({ scope, person }, { params, reply }) => {
    const found = await findOperationInScope(db, scope, params.id);
    if (!found) return notFound(reply, 'operation', { href: '/operations', name: 'operations' });
    const operation = found.operation;
    const [activity, verdicts, decision, deliveries] = await Promise.all([
      listActivity(db, activityScope(scope), { operationId: operation.id }, { limit: MAX_ENTRIES, after: 0 }),
      verdictsOfOperation(db, operation.id),
      operation.decisionId ? findDecisionRecord(db, operation.decisionId) : Promise.resolve(undefined),
      deliveriesOfOperation(db, operation.id),
    ]);
    const entries = activity.rows;
    const attempts = entries.filter((entry) => entry.kind === 'delivery.attempted');
    // What it is about, as the console's home names it: its capability, its task (operations/overview.ts).
    const about = found.about;
    return {
      title: about ? `Operation: ${about}` : `Operation ${operation.id}`,
      body: (
        <>
          <p>
            <a href="/operations">Operations</a>
          </p>
          <h1>
            {operation.kind} operation{about ? `: ${about}` : ''} <Badge value={operation.status} />
          </h1>
          <dl class="facts">
            <dt>Id</dt>
            <dd>
              <code>{operation.id}</code>
            </dd>
            <dt>Agent</dt>
            <dd>{operation.agentId && found.agentName !== null ? <a href={`/agents/${operation.agentId}`}>{found.agentName}</a> : '—'}</dd>
            {found.capabilityKey !== null ? (
              <>
                <dt>Capability</dt>
                <dd>
                  <a href={`/capabilities/${(operation.input as { capability_id: string }).capability_id}`}>{found.capabilityKey}</a>
                </dd>
              </>
            ) : null}
            {operation.kind === 'task' && about !== null ? (
              <>
                <dt>Task</dt>
                <dd>
                  <a href={`/tasks/${encodeURIComponent((operation.input as { task_id: string }).task_id)}`}>{about}</a>
                </dd>
              </>
            ) : null}
            {operation.kind === 'ask' && operation.personId === person.id ? (
              <>
                <dt>Answer</dt>
                <dd>
                  <a href={`/ask/${operation.id}`}>The assistant’s answer</a>
                </dd>
              </>
            ) : null}
            <dt>Space</dt>
            <dd>{found.spaceName ?? '—'}</dd>
            <dt>For</dt>
            <dd>
              {found.personName}
              {operation.clientId ? (
                <>
                  {' '}
                  <small>through {theClient({ id: operation.clientId, name: found.clientName })}</small>
                </>
              ) : null}
            </dd>
            <dt>Started</dt>
            <dd>
              <Time value={operation.createdAt} />
            </dd>
            <dt>Finished</dt>
            <dd>
              <Time value={operation.finishedAt} />
            </dd>
            {operation.traceparent ? (
              <>
                <dt>Trace</dt>
                <dd>
                  <code>{operation.traceparent}</code>
                </dd>
              </>
            ) : null}
          </dl>

          <h2>Timeline</h2>
          <Timeline operation={operation} entries={entries} decision={decision} />
          {activity.next !== null ? (
            <p class="muted">
              Only the first {MAX_ENTRIES} entries of the activity log are shown
              {operation.traceparent ? (
                <>
                  : <a href={pageHref('/activity', { trace: operation.traceparent.slice(3, 35) })}>everything on this operation's trace</a>
                </>
              ) : null}
              .
            </p>
          ) : null}

          <h2>Input</h2>
          <BoundedJson value={operation.input} />

          {operation.kind === 'capability' || verdicts.length || decision ? (
            <>
              <h2>Gate</h2>
              {verdicts.length === 0 ? <p>The gate has not decided this operation.</p> : verdicts.map((verdict) => <VerdictBlock key={verdict.id} verdict={verdict} />)}

              <h2 id="decision">Decision</h2>
              {decision ? <DecisionBlock decision={decision} /> : <p>No person was asked to decide.</p>}
            </>
          ) : null}

          {operation.kind !== 'capability' || deliveries.length || attempts.length ? (
            <>
              <h2>Deliveries</h2>
              <Deliveries deliveries={deliveries} attempts={attempts} />
            </>
          ) : null}

          <h2>{operation.error ? 'Error' : 'Result'}</h2>
          <Outcome operation={operation} />
        </>
      ),
    };
  });
}


/** The list's rows; also an agent's recent work, where the agent's own column is left out (`without: 'agent'`). */
export function OperationTable({ rows, caption, without }: { rows: OperationListRow[]; caption?: string; without?: 'agent' }): VNode {
  return (
    <table class="stack">
      {caption ? <caption class="visually-hidden">{caption}</caption> : null}
      <thead>
        <tr>
          <th scope="col">Operation</th>
          <th scope="col">Status</th>
          <th scope="col">Kind</th>
          {without === 'agent' ? null : <th scope="col">Agent</th>}
          <th scope="col">Capability</th>
          <th scope="col">Space</th>
          <th scope="col">For</th>
          <th scope="col">Started</th>
          <th scope="col">Finished</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.id}>
            <th scope="row" data-label="Operation">
              <a href={`/operations/${row.id}`}>
                <code>{row.id}</code>
              </a>
            </th>
            <td data-label="Status">
              <Badge value={row.status} />
            </td>
            <td data-label="Kind">
              {row.kind}
              {row.about !== null ? <small>: {row.about}</small> : null}
            </td>
            {without === 'agent' ? null : <td data-label="Agent">{row.agent ? <a href={`/agents/${row.agent.id}`}>{row.agent.name}</a> : '—'}</td>}
            <td data-label="Capability">{row.capability ? <a href={`/capabilities/${row.capability.id}`}>{row.capability.key}</a> : '—'}</td>
            <td data-label="Space">{row.space?.name ?? '—'}</td>
            <td data-label="For">{row.person.name}</td>
            <td data-label="Started">
              <Time value={row.createdAt} />
            </td>
            <td data-label="Finished">
              <Time value={row.finishedAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

interface Step {
  at: string;
  title: string;
  detail?: string;
  status?: string;
}

const STEP_TITLES: Record<string, string> = {
  'operation.started': 'Queued',
  'operation.running': 'Running',
  'operation.paused': 'Paused',
  'operation.resumed': 'Resumed',
  'operation.succeeded': 'Succeeded',
  'operation.failed': 'Failed',
  'operation.cancelled': 'Cancelled',
  'gate.verdict': 'Gate verdict',
  'decision.opened': 'Decision requested',
  'decision.approved_once': 'Approval given',
  'decision.resolved': 'Decision resolved',
  'decision.expired': 'Decision expired',
  'decision.reminded': 'Half-way reminder',
  'notification.sent': 'Emailed',
  'notification.failed': 'Email not delivered',
  'delivery.attempted': 'Delivery attempt',
  'connector.called': 'Connector called',
  'tool.called': 'Tool called',
};

/**
 * The operation's steps in time order: what the activity log recorded, its progress events, and — where the log
 * has no entry (work done before it was kept) — the steps its row and its decision show: queued, paused,
 * resolved, finished.
 */
function Timeline({ operation, entries, decision }: { operation: OperationRow; entries: ActivityEntry[]; decision: DecisionRecord | undefined }): VNode {
  const logged = new Set(entries.map((entry) => entry.kind));
  const steps: Step[] = entries.map((entry) => ({ at: entry.at, title: STEP_TITLES[entry.kind] ?? entry.kind, detail: stepDetail(entry) }));
  if (!logged.has('operation.started')) steps.push({ at: operation.createdAt, title: 'Queued' });
  if (decision && !logged.has('operation.paused') && !logged.has('decision.opened')) {
    steps.push({ at: decision.requested_at, title: 'Paused', detail: `waiting for a person's decision: ${decision.reasons.join('; ')}` });
  }
  if (decision?.resolved_at && !logged.has('decision.resolved')) {
    steps.push({ at: decision.resolved_at, title: decision.status === 'approved' ? 'Resumed' : `Decision ${decision.status}`, status: decision.status });
  }
  for (const event of operation.progress) {
    steps.push({ at: event.at, title: 'Progress', detail: event.percent === undefined ? event.message : `${event.message} (${event.percent}%)` });
  }
  const settled = ['operation.succeeded', 'operation.failed', 'operation.cancelled'].some((kind) => logged.has(kind));
  if (operation.finishedAt && !settled) steps.push({ at: operation.finishedAt, title: 'Finished', status: operation.status });
  steps.sort((a, b) => Date.parse(toIso(a.at)) - Date.parse(toIso(b.at)));
  return (
    <ol class="timeline">
      {steps.map((step, index) => (
        <li key={index}>
          <Time value={step.at} /> — <strong>{step.title}</strong>
          {step.status ? (
            <>
              {' '}
              <Badge value={step.status} />
            </>
          ) : null}
          {step.detail ? <>: {step.detail}</> : null}
        </li>
      ))}
    </ol>
  );
}

/** An operation's own steps need no words beyond their title but a failure's error; anything else says what it was. */
function stepDetail(entry: ActivityEntry): string | undefined {
  if (!entry.kind.startsWith('operation.')) return entry.summary;
  const error = (entry.details as { error?: { code?: unknown; message?: unknown } }).error;
  return error ? `${String(error.code)}: ${String(error.message)}` : undefined;
}

/** One verdict of the gate: what it said, why, which rules decided, and what the shadow rules would have done. */
function VerdictBlock({ verdict }: { verdict: VerdictView }): VNode {
  return (
    <article>
      <p>
        <Badge value={verdict.verdict} /> <Time value={verdict.createdAt} />
      </p>
      {verdict.reasons.length ? (
        <ul>
          {verdict.reasons.map((reason, index) => (
            <li key={index}>{reason}</li>
          ))}
        </ul>
      ) : (
        <p class="muted">No reasons given.</p>
      )}
      {verdict.ruleIds.length ? (
        <p>
          <small>Rules: {verdict.ruleIds.join(', ')}</small>
        </p>
      ) : null}
      {verdict.shadow.length ? (
        <p>
          <small>
            Shadow rules (not enforced) would have said:{' '}
            {verdict.shadow.map((entry) => `${entry.name}: ${entry.would.replace(/_/g, ' ')}`).join('; ')}
          </small>
        </p>
      ) : null}
    </article>
  );
}

function DecisionBlock({ decision }: { decision: DecisionRecord }): VNode {
  const by = decision.resolved_by;
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <Badge value={decision.status} />
      </dd>
      <dt>Why asked</dt>
      <dd>{decision.reasons.join('; ') || '—'}</dd>
      <dt>Requested</dt>
      <dd>
        <Time value={decision.requested_at} />
      </dd>
      <dt>Expires</dt>
      <dd>
        <Time value={decision.expires_at} />
      </dd>
      {decision.resolved_at ? (
        <>
          <dt>Resolved</dt>
          <dd>
            <Time value={decision.resolved_at} />
          </dd>
        </>
      ) : null}
      {by ? (
        <>
          <dt>By</dt>
          <dd>{describeResolver(by)}</dd>
        </>
      ) : null}
      {decision.note ? (
        <>
          <dt>Note</dt>
          <dd>{decision.note}</dd>
        </>
      ) : null}
    </dl>
  );
}

/** Each delivery with its state, and each attempt the activity log recorded (its number, answer or error). */
function Deliveries({ deliveries, attempts }: { deliveries: DeliveryView[]; attempts: ActivityEntry[] }): VNode {
  if (deliveries.length === 0 && attempts.length === 0) return <p>Nothing was delivered to an agent.</p>;
  return (
    <>
      {deliveries.length ? (
        <table class="stack">
          <caption class="visually-hidden">Deliveries</caption>
          <thead>
            <tr>
              <th scope="col">Delivery</th>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">First attempt</th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((delivery) => (
              <tr key={delivery.id}>
                <th scope="row" data-label="Delivery">
                  <code>{delivery.id}</code>
                </th>
                <td data-label="Type">{delivery.type}</td>
                <td data-label="Status">
                  <Badge value={delivery.status} />
                </td>
                <td data-label="Attempts">{delivery.attempts}</td>
                <td data-label="First attempt">
                  <Time value={delivery.firstAttemptAt} />
                </td>
                <td data-label="Last error">{delivery.lastError ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {attempts.length ? (
        <table class="stack">
          <caption class="visually-hidden">Delivery attempts</caption>
          <thead>
            <tr>
              <th scope="col">Attempt</th>
              <th scope="col">When</th>
              <th scope="col">Outcome</th>
              <th scope="col">HTTP status</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {attempts.map((entry) => {
              const attempt = attemptDetails(entry);
              return (
                <tr key={entry.seq}>
                  <th scope="row" data-label="Attempt">
                    Attempt {attempt.number ?? '—'}
                  </th>
                  <td data-label="When">
                    <Time value={entry.at} />
                  </td>
                  <td data-label="Outcome">{attempt.outcome ? <Badge value={attempt.outcome} /> : '—'}</td>
                  <td data-label="HTTP status">{attempt.httpStatus ?? '—'}</td>
                  <td data-label="Error">{attempt.error ?? '—'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

/** What a `delivery.attempted` entry says of its attempt: its number, `delivered`, `will_retry` or `failed`, the agent's HTTP status, the error. */
function attemptDetails(entry: ActivityEntry): { number?: string; outcome?: string; httpStatus?: string; error?: string } {
  const details = entry.details;
  const text = (value: unknown) => (value === undefined || value === null ? undefined : typeof value === 'object' ? JSON.stringify(value) : String(value));
  return { number: text(details.attempt), outcome: text(details.outcome ?? details.status), httpStatus: text(details.http_status), error: text(details.error) };
}

function Outcome({ operation }: { operation: OperationRow }): VNode {
  if (operation.error) {
    return (
      <p class="error">
        <code>{operation.error.code}</code>: {operation.error.message}
      </p>
    );
  }
  if (operation.result === null) return <p>{operation.finishedAt ? 'No result.' : 'Not finished yet.'}</p>;
  return <BoundedJson value={operation.result} />;
}
