/**
 * GET /activity: the organization's audit log (DESIGN 4.6) — newest first, filtered by person, agent, space,
 * capability, kind, trace and time, keyset-paged; `?person=` and `?agent=` are the views of everything done by or
 * on behalf of one person or agent. GET /activity/export.jsonl streams the same selection, oldest first, as JSON
 * Lines. A person sees their spaces' entries and their own; owners and admins see everything. A row links to its
 * capability, its operation and the record it is about (a task, a decision, a memory item…) where that has a page.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { activityNames, type ActivityNames, type Named } from '../activity/names.js';
import { listActivity, type ActivityEntry, type ActivityFilter, type ActivityScope } from '../activity/records.js';
import { consolePage, type Scope } from './console.js';
import { formatTime } from './format.js';
import { AnySelect, optionalField, SubjectLink } from './parts.js';
import type { WebContext } from './respond.js';

const toOption = (named: Named) => ({ value: named.id, label: named.name });

const PAGE_SIZE = 50;
const EXPORT_BATCH = 1_000;

const id = z.string().max(80).regex(/^[A-Za-z0-9_.:-]+$/, 'must be an id');
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date (YYYY-MM-DD)').refine((value) => !Number.isNaN(Date.parse(value)), 'must be a date');

const filters = z.object({
  person: optionalField(id),
  agent: optionalField(id),
  client: optionalField(z.string().max(300)),
  space: optionalField(id),
  capability: optionalField(id),
  kind: optionalField(z.string().max(64).regex(/^[a-z_]+(\.[a-z_]+)?$/, 'must be a kind such as decision or decision.resolved')),
  trace: optionalField(z.string().regex(/^[0-9a-f]{32}$/, 'must be a trace id (32 hexadecimal digits)')),
  from: optionalField(day),
  to: optionalField(day),
});
const pageQuery = filters.extend({ before: optionalField(z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER)) });

type Filters = z.output<typeof filters>;

/** The kinds offered by the filter: each family, then its events. */
const KIND_CHOICES: Array<[string, string]> = [
  ['tool', 'Tool calls'],
  ['operation', 'Operations'],
  ['gate', 'Gate verdicts'],
  ['decision', 'Decisions'],
  ['delivery', 'Deliveries'],
  ['connector', 'Connector calls'],
  ['memory', 'Memory'],
  ['task', 'Tasks'],
  ['rule', 'Rules'],
  ['notification', 'Emails to people'],
  ['person', 'People: sign-ins, accounts, invitations, roles'],
  ['invitation', 'Withdrawn invitations'],
  ['space', 'Spaces'],
  ['consent', 'Consents'],
  ['client', 'Disconnections'],
  ['org', 'Organization file'],
  ['agent', 'Agents set up on the console'],
  ['capability', 'Capabilities set up on the console'],
  ['endpoint', 'Event endpoints'],
];

function toFilter(query: Filters): ActivityFilter {
  const kind = query.kind;
  return {
    personId: query.person,
    agentId: query.agent,
    clientId: query.client,
    spaceId: query.space,
    capabilityId: query.capability,
    ...(kind ? (kind.includes('.') ? { kind } : { kindPrefix: kind }) : {}),
    traceId: query.trace,
    from: query.from ? new Date(`${query.from}T00:00:00Z`).toISOString() : undefined,
    // The whole of the `to` day.
    to: query.to ? new Date(Date.parse(`${query.to}T00:00:00Z`) + 86_400_000).toISOString() : undefined,
  };
}

function activityScope(scope: Scope): ActivityScope {
  return scope.all ? { all: true } : { all: false, personId: scope.personId, spaceIds: scope.spaceIds };
}

/** The query string of `query` without its empty fields, with `extra` merged in. */
function queryString(query: Filters, extra: Record<string, string | number> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...query, ...extra })) if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function registerActivityPage(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;

  consolePage(app, web, '/activity', pageQuery, async (viewer, { query }) => {
    const scope = activityScope(viewer.scope);
    const [page, names] = await Promise.all([
      listActivity(db, scope, toFilter(query), { limit: PAGE_SIZE, before: query.before }),
      activityNames(db, scope),
    ]);
    const { before: _before, ...selection } = query;
    return {
      title: 'Activity',
      body: (
        <>
          <h1>Activity</h1>
          <p>
            Everything that changed or decided something in the organization, newest first
            {viewer.scope.all ? '' : ': in your spaces, and what was done by you or on your behalf'}. Each entry is sealed into a hash
            chain that <code>npx atrium activity verify</code> checks.
          </p>
          <Filters query={selection} names={names} />
          <p>
            <a href={`/activity/export.jsonl${queryString(selection)}`} download="activity.jsonl">
              Export these entries as JSON Lines
            </a>
          </p>
          <ActivityTable entries={page.rows} names={names} />
          <nav class="pager" aria-label="Pages">
            {query.before ? <a href={`/activity${queryString(selection)}`}>Newest</a> : <span />}
            {page.next ? <a href={`/activity${queryString(selection, { before: page.next })}`}>Older entries</a> : null}
          </nav>
        </>
      ),
    };
  });

  consolePage(app, web, '/activity/export.jsonl', filters, async (viewer, { query, reply }) => {
    const scope = activityScope(viewer.scope);
    const filter = toFilter(query);
    async function* lines(): AsyncGenerator<string> {
      let after = 0;
      for (;;) {
        const page = await listActivity(db, scope, filter, { limit: EXPORT_BATCH, after });
        for (const entry of page.rows) yield `${JSON.stringify(exported(entry))}\n`;
        if (page.next === null) return;
        after = page.next;
      }
    }
    return reply
      .type('application/x-ndjson; charset=utf-8')
      .header('content-disposition', 'attachment; filename="activity.jsonl"')
      .send(Readable.from(lines()));
  });
}

/** An entry as one line of the export: the stored record, with the field names of the API. */
function exported(entry: ActivityEntry) {
  return {
    seq: entry.seq,
    at: new Date(entry.at).toISOString(),
    kind: entry.kind,
    summary: entry.summary,
    space_id: entry.spaceId,
    person_id: entry.personId,
    client_id: entry.clientId,
    agent_id: entry.agentId,
    capability_id: entry.capabilityId,
    operation_id: entry.operationId,
    subject: entry.subject,
    details: entry.details,
    traceparent: entry.traceparent,
    position: entry.position,
    prev_hash: entry.prevHash,
    hash: entry.hash,
  };
}


function Filters({ query, names }: { query: Filters; names: ActivityNames }): VNode {
  return (
    <form class="filters" method="get" action="/activity" aria-label="Filter the activity">
      <AnySelect label="Person" name="person" value={query.person} options={names.people.map(toOption)} />
      <AnySelect label="Agent" name="agent" value={query.agent} options={names.agentChoices.map(toOption)} />
      <AnySelect label="Space" name="space" value={query.space} options={names.spaces.map(toOption)} />
      <AnySelect label="Capability" name="capability" value={query.capability} options={names.capabilities.map(toOption)} />
      <AnySelect label="Kind" name="kind" value={query.kind} options={KIND_CHOICES.map(([value, label]) => ({ value, label }))} />
      <label>
        From
        <input type="date" name="from" value={query.from ?? ''} />
      </label>
      <label>
        To
        <input type="date" name="to" value={query.to ?? ''} />
      </label>
      {query.trace ? <input type="hidden" name="trace" value={query.trace} /> : null}
      {query.client ? <input type="hidden" name="client" value={query.client} /> : null}
      <button type="submit">Filter</button>
      <a href="/activity">Clear</a>
    </form>
  );
}

function ActivityTable({ entries, names }: { entries: ActivityEntry[]; names: ActivityNames }): VNode {
  if (entries.length === 0) return <p>No activity matches.</p>;
  const name = (list: Named[], value: string | null) => (value ? (list.find((item) => item.id === value)?.name ?? value) : null);
  return (
    <table class="stack">
      <caption class="visually-hidden">Activity entries, newest first</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">What</th>
          <th scope="col">Who</th>
          <th scope="col">Where</th>
          <th scope="col">Trace</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => {
          const traceId = entry.traceparent?.slice(3, 35);
          return (
            <tr key={entry.seq}>
              <td data-label="When" class="when">
                <time dateTime={new Date(entry.at).toISOString()}>{formatTime(entry.at)}</time>
              </td>
              <td data-label="What">
                <span class="badge">{entry.kind}</span> {entry.summary}
              </td>
              <td data-label="Who">
                <Who entry={entry} names={names} name={name} />
              </td>
              <td data-label="Where">
                {entry.spaceId ? name(names.spaces, entry.spaceId) : '—'}
                {entry.capabilityId ? (
                  <>
                    {' '}
                    · <a href={`/capabilities/${encodeURIComponent(entry.capabilityId)}`}>{name(names.capabilities, entry.capabilityId)}</a>
                  </>
                ) : null}
                {entry.operationId ? (
                  <>
                    {' '}
                    · <a href={`/operations/${encodeURIComponent(entry.operationId)}`}>operation</a>
                  </>
                ) : null}
                <SubjectLink entry={entry} />
              </td>
              <td data-label="Trace">
                {traceId ? (
                  <a href={`/activity?trace=${traceId}`} title={entry.traceparent ?? undefined}>
                    <code>{traceId.slice(0, 8)}</code>
                  </a>
                ) : (
                  '—'
                )}
                {entry.hash ? null : <small> (sealing)</small>}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/**
 * Who did it: the person, the client it came through (by the name the client gave itself), and the agent when it is
 * not that client's own agent; the organization itself when none of them.
 */
function Who({ entry, names, name }: { entry: ActivityEntry; names: ActivityNames; name: (list: Named[], value: string | null) => string | null }): VNode {
  const client = entry.clientId ? names.clients.get(entry.clientId) : undefined;
  const agentShown = entry.agentId && entry.agentId !== client?.agentId;
  if (!entry.personId && !entry.clientId && !entry.agentId) return <>the organization</>;
  return (
    <>
      {entry.personId ? <a href={`/activity?person=${encodeURIComponent(entry.personId)}`}>{name(names.people, entry.personId)}</a> : null}
      {entry.clientId ? (
        <>
          {entry.personId ? ' via ' : ''}
          <a href={`/activity?client=${encodeURIComponent(entry.clientId)}`} title={entry.clientId}>
            {client?.name ?? entry.clientId}
          </a>
        </>
      ) : null}
      {agentShown ? (
        <>
          {entry.personId || entry.clientId ? ', agent ' : 'agent '}
          <a href={`/activity?agent=${encodeURIComponent(entry.agentId!)}`}>{name(names.agents, entry.agentId)}</a>
        </>
      ) : null}
    </>
  );
}
