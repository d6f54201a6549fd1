/**
 * GET /agents and /agents/:id (DESIGN 4.5, 4.6): who works for the organization — autonomy, the responsible
 * person, the monthly budget and what this month used of it, whether enabled — and for one agent its last
 * delivery, its recent delivery failures and its recent work, within the reader's scope.
 */
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { findAgentOverview, listAgentOverviews, type AgentCursor, type AgentOverview } from '../agents/overview.js';
import type { UsageRecord } from '../agents/usage.js';
import { deliveryFailuresOfAgent, lastDeliveryOfAgent, type DeliveryView } from '../delivery/history.js';
import { listOperations } from '../operations/list.js';
import { Badge, OlderLink, Time, notFound, optionalField, pageHref } from './parts.js';
import { consolePage } from './console.js';
import { isManager } from '../people/records.js';
import { FromFile, StatusToggle, orgFileName } from './manage.js';
import { noQuery, OperationTable } from './operations.js';
import type { WebContext } from './respond.js';

const PAGE_SIZE = 50;
const RECENT_WORK = 10;
const FAILURE_DAYS = 30;

/** The autonomy levels' names, 0 to 3 (DESIGN 4.2). */
export const AUTONOMY = ['observe', 'propose', 'act within rules', 'trusted'];

/** `<rank>|<id>|<name>` of the last agent shown (the name last: it may hold a bar). */
const cursor = z
  .string()
  .max(600)
  .transform((value, issue): AgentCursor => {
    const match = /^([0-2])\|([^|]{1,200})\|(.*)$/s.exec(value);
    if (!match) {
      issue.addIssue({ code: 'custom', message: 'the cursor of the "More" link' });
      return z.NEVER;
    }
    return { rank: Number(match[1]), id: match[2], name: match[3] };
  });

const listQuery = z.object({ after: optionalField(cursor) });

export function registerAgentPages(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;
  const file = orgFileName(web.ctx.config);

  consolePage(app, web, '/agents', listQuery, async ({ scope, person }, { query }) => {
    const page = await listAgentOverviews(db, scope, { limit: PAGE_SIZE, after: query.after });
    const next = page.next ? pageHref('/agents', { after: `${page.next.rank}|${page.next.id}|${page.next.name}` }) : null;
    return {
      title: 'Agents',
      body: (
        <>
          <h1>Agents</h1>
          {isManager(person) ? (
            <p>
              <a href="/agents/new" role="button">
                New agent
              </a>
            </p>
          ) : null}
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Status</th>
                <th scope="col">Autonomy</th>
                <th scope="col">Responsible</th>
                <th scope="col">Budget this month</th>
              </tr>
            </thead>
            <tbody>
              {page.rows.map((agent) => (
                <tr key={agent.id}>
                  <th scope="row" data-label="Agent">
                    <a href={`/agents/${agent.id}`}>{agent.name}</a> <small>{kindLabel(agent)}</small>
                    <FromFile managedBy={agent.managedBy} file={file} />
                  </th>
                  <td data-label="Status">
                    <StatusBadge status={agent.status} />
                  </td>
                  <td data-label="Autonomy">{autonomyLabel(agent.autonomy)}</td>
                  <td data-label="Responsible">{agent.responsible?.name ?? '—'}</td>
                  <td data-label="Budget this month">
                    <Usage usage={agent.usage} name={agent.name} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <OlderLink next={next} label="More" />
        </>
      ),
    };
  });

  consolePage<typeof noQuery, { id: string }>(app, web, '/agents/:id', noQuery, async ({ scope, person, csrf }, { params, reply }) => {
    const agent = await findAgentOverview(db, scope, params.id);
    if (!agent) return notFound(reply, 'agent', { href: '/agents', name: 'agents' });
    const [last, failures, work] = await Promise.all([
      lastDeliveryOfAgent(db, scope, agent.id),
      deliveryFailuresOfAgent(db, scope, agent.id, { days: FAILURE_DAYS, limit: 5 }),
      listOperations(db, scope, { agentId: agent.id }, { limit: RECENT_WORK }),
    ]);
    return {
      title: agent.name,
      body: (
        <>
          <p>
            <a href="/agents">Agents</a>
          </p>
          <h1>
            {agent.name} <StatusBadge status={agent.status} />
            <FromFile managedBy={agent.managedBy} file={file} />
          </h1>
          {isManager(person) ? <ManageAgent agent={agent} csrf={csrf} file={file} /> : null}
          {agent.description ? <p>{agent.description}</p> : null}
          <dl class="facts">
            <dt>Kind</dt>
            <dd>{kindLabel(agent)}</dd>
            {agent.key ? (
              <>
                <dt>Key</dt>
                <dd>
                  <code>{agent.key}</code>
                </dd>
              </>
            ) : null}
            <dt>Autonomy</dt>
            <dd>{autonomyLabel(agent.autonomy)}</dd>
            <dt>Responsible</dt>
            <dd>{agent.responsible?.name ?? '—'}</dd>
            <dt>Budget ({agent.usage.month})</dt>
            <dd>
              <Usage usage={agent.usage} name={agent.name} />
            </dd>
            <dt>Delivery</dt>
            <dd>{agent.deliveryHost ? <>webhook to {agent.deliveryHost}</> : 'none'}</dd>
          </dl>

          <h2>Last delivery</h2>
          {last ? <LastDelivery delivery={last} /> : <p>No delivery you can see.</p>}

          <h2>Failures in the last {FAILURE_DAYS} days</h2>
          {failures.count === 0 ? (
            <p>No delivery failed.</p>
          ) : (
            <>
              <p>
                {failures.count} {failures.count === 1 ? 'delivery' : 'deliveries'} failed.
              </p>
              <ul>
                {failures.latest.map((delivery) => (
                  <li key={delivery.id}>
                    <Time value={delivery.updatedAt} />: <a href={`/operations/${delivery.operationId}`}>{delivery.type}</a> after {delivery.attempts}{' '}
                    {delivery.attempts === 1 ? 'attempt' : 'attempts'}
                    {delivery.lastError ? <> — {delivery.lastError}</> : null}
                  </li>
                ))}
              </ul>
            </>
          )}

          <h2>Recent work</h2>
          {work.rows.length === 0 ? <p>No operations you can see.</p> : <OperationTable rows={work.rows} caption={`Recent work of ${agent.name}`} without="agent" />}
          <p>
            {work.next ? (
              <>
                <a href={pageHref('/operations', { agent: agent.id })}>All of {agent.name}'s operations</a> ·{' '}
              </>
            ) : null}
            <a href={pageHref('/activity', { agent: agent.id })}>Everything {agent.name} did, in the activity log</a>
          </p>
        </>
      ),
    };
  });
}

/**
 * What an owner or admin may do to the agent here: edit and enable/disable one the console made, enable/disable a
 * connected application; one the file declares is changed in the file, and the assistant is always there.
 */
function ManageAgent({ agent, csrf, file }: { agent: AgentOverview; csrf: string; file: string }): VNode | null {
  if (agent.managedBy === 'file') return <p class="muted">Declared in {file}: change it there and apply the file.</p>;
  if (agent.kind === 'builtin') return null;
  const next = agent.status === 'active' ? 'disabled' : 'active';
  return (
    <div class="manage">
      {agent.kind === 'declared' ? (
        <a href={`/agents/${agent.id}/edit`} role="button">
          Edit
        </a>
      ) : null}
      <StatusToggle action={`/agents/${agent.id}/status`} csrf={csrf} status={next} enable={next === 'active'} />
    </div>
  );
}

/** An agent the gate lets act is enabled; a disabled one is refused by the gate's hard denies. */
function StatusBadge({ status }: { status: AgentOverview['status'] }): VNode {
  return <Badge value={status === 'active' ? 'enabled' : 'disabled'} />;
}

function kindLabel(agent: AgentOverview): string {
  return agent.kind === 'builtin' ? 'built in' : agent.kind === 'client' ? 'connected application' : 'declared';
}

function autonomyLabel(autonomy: number): string {
  return `${autonomy} · ${AUTONOMY[autonomy] ?? 'unknown'}`;
}

/** The month's use against the budget as a meter, with the numbers in words beside it. */
function Usage({ usage, name }: { usage: UsageRecord; name: string }): VNode {
  if (usage.budget === null) return <span>{usage.used} units used · no budget</span>;
  return (
    <span>
      <meter min={0} max={Math.max(usage.budget, 1)} value={usage.used} high={usage.budget * 0.8} optimum={0} aria-label={`Budget used by ${name}`}>
        {usage.used} of {usage.budget}
      </meter>{' '}
      {usage.used} of {usage.budget} units
    </span>
  );
}

function LastDelivery({ delivery }: { delivery: DeliveryView }): VNode {
  return (
    <p>
      <Badge value={delivery.status} /> {delivery.type} <Time value={delivery.updatedAt} />, {delivery.attempts} {delivery.attempts === 1 ? 'attempt' : 'attempts'}
      {delivery.lastError ? <> — last error: {delivery.lastError}</> : null} · <a href={`/operations/${delivery.operationId}`}>its operation</a>
    </p>
  );
}
