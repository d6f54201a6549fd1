/**
 * GET /events and /events/:id (DESIGN 4.8): where the organization's events go — each endpoint with its host, the
 * events it takes, whether enabled, whether the organization file manages it, and its latest deliveries — for owners
 * and admins (anyone else is answered 403). They add an endpoint (POST /events; the signing secret the server
 * generates is shown once, on the answer), and change, enable, disable or delete one made here (POST /events/:id,
 * /events/:id/enabled, /events/:id/delete — which asks first, and deletes when confirmed). An endpoint from the
 * organization file changes only with the file: a POST about it is answered 409.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { isAppError } from '../../platform/errors.js';
import { ORG_EVENT_TYPES } from '../events/announce.js';
import {
  assertManagesEndpoints,
  createEndpoint,
  deleteEndpoint,
  endpointSettings,
  endpointToChange,
  findEndpoint,
  hostOf,
  listEndpoints,
  newEndpointInput,
  recentDeliveries,
  setEndpointEnabled,
  updateEndpoint,
  type EndpointDeliveryRecord,
  type EndpointRecord,
} from '../events/endpoints.js';
import { sendTestEvent } from '../events/webhooks.js';
import { anyoneSignedIn, consolePage, consolePost, type ConsolePage, type Viewer } from './console.js';
import { noQuery } from './operations.js';
import { Badge, ConfirmPage, Time, notFound, optionalField } from './parts.js';
import { FromFile } from './manage.js';
import { formField, formFields, type WebContext } from './respond.js';

/** Deliveries shown per endpoint on the list, and on an endpoint's own page. */
const LISTED_DELIVERIES = 3;
const PAGE_DELIVERIES = 25;

/** What each event type tells, for the checkboxes (README "Events" has the bodies). */
const EVENT_MEANINGS: Record<(typeof ORG_EVENT_TYPES)[number], string> = {
  'decision.pending': 'a decision waits for a person',
  'decision.resolved': 'a decision was approved or denied',
  'decision.reminder': 'a decision is still open half-way to its expiry',
  'operation.failed': 'an operation failed',
  'task.question': "a task's agent asked its people a question",
  'budget.threshold': 'an agent used 80 % of its monthly budget',
};

/** `?sent=test` after "Send a test event". */
const endpointQuery = z.object({ sent: optionalField(z.literal('test')) });

/** What an owner or admin typed, shown again beside what was wrong with it. */
interface Entered {
  key?: string;
  url?: string;
  events: string[];
  secret_env?: string;
}

export function registerEventPages(app: FastifyInstance, web: WebContext): void {
  const { db } = web.ctx;

  consolePage(app, web, '/events', noQuery, async ({ person, csrf }) => {
    assertManagesEndpoints(person);
    return { title: 'Events', body: await endpointsList(web, csrf) };
  });

  consolePage<typeof endpointQuery, { id: string }>(app, web, '/events/:id', endpointQuery, async ({ person, csrf }, { params, query, reply }) => {
    assertManagesEndpoints(person);
    const endpoint = await findEndpoint(db, params.id);
    if (!endpoint) return notFound(reply, 'event endpoint', { href: '/events', name: 'Events' });
    const deliveries = (await recentDeliveries(db, [endpoint.id], PAGE_DELIVERIES)).get(endpoint.id) ?? [];
    const sent = query.sent ? 'A test event is on its way: it is listed below with what came of it (reload to see).' : undefined;
    return { title: `Endpoint ${endpoint.key}`, body: <EndpointPage endpoint={endpoint} deliveries={deliveries} csrf={csrf} sent={sent} /> };
  });

  formRoute(app, web, '/events', async ({ person, csrf }, body, reply) => {
    const entered = enteredFrom(body);
    const parsed = newEndpointInput.safeParse(entered);
    let problem = parsed.success ? undefined : describeIssues(parsed.error);
    if (parsed.success) {
      try {
        const { endpoint, secret } = await createEndpoint(db, parsed.data, person);
        if (!secret) return reply.redirect(`/events/${endpoint.id}`, 303);
        return { title: 'Endpoint added', body: <SecretShown endpoint={endpoint} secret={secret} /> };
      } catch (error) {
        problem = refusal(error);
      }
    }
    reply.code(400);
    return { title: 'Events', body: await endpointsList(web, csrf, { problem: problem!, entered }) };
  });

  formRoute(app, web, '/events/:id', async ({ person, csrf }, body, reply, { id }) => {
    const entered = enteredFrom(body);
    const parsed = endpointSettings.safeParse(entered);
    if (!parsed.success) {
      const endpoint = await findEndpoint(db, id);
      if (!endpoint) return notFound(reply, 'event endpoint', { href: '/events', name: 'Events' });
      reply.code(400);
      const deliveries = (await recentDeliveries(db, [endpoint.id], PAGE_DELIVERIES)).get(endpoint.id) ?? [];
      return { title: `Endpoint ${endpoint.key}`, body: <EndpointPage endpoint={endpoint} deliveries={deliveries} csrf={csrf} problem={describeIssues(parsed.error)} entered={entered} /> };
    }
    const { endpoint, secret } = await updateEndpoint(db, id, parsed.data, person);
    if (!secret) return reply.redirect(`/events/${endpoint.id}`, 303);
    return { title: 'Endpoint saved', body: <SecretShown endpoint={endpoint} secret={secret} /> };
  });

  formRoute(app, web, '/events/:id/enabled', async ({ person }, body, reply, { id }) => {
    const endpoint = await setEndpointEnabled(db, id, formField(body, 'enabled') === 'true', person);
    return reply.redirect(`/events/${endpoint.id}`, 303);
  });

  formRoute(app, web, '/events/:id/test', async ({ person }, _body, reply, { id }) => {
    await sendTestEvent(web.ctx, id, person);
    return reply.redirect(`/events/${id}?sent=test`, 303);
  });

  // Deleting cannot be undone (its secret and its deliveries go with it): the first POST asks, the confirmed one deletes.
  formRoute(app, web, '/events/:id/delete', async ({ person, csrf }, body, reply, { id }) => {
    if (formField(body, 'confirm') !== 'yes') {
      const endpoint = await endpointToChange(db, id, person);
      return { title: `Delete the endpoint ${endpoint.key}?`, body: <ConfirmDeletion endpoint={endpoint} csrf={csrf} /> };
    }
    await deleteEndpoint(db, id, person);
    return reply.redirect('/events', 303);
  });
}

/** `POST path` from a console form (`consolePost`): owners and admins only, as the domain's functions check. */
function formRoute(
  app: FastifyInstance,
  web: WebContext,
  path: string,
  handle: (viewer: Viewer, body: unknown, reply: FastifyReply, params: Record<string, string>) => Promise<ConsolePage | FastifyReply>,
): void {
  consolePost(app, web, path, anyoneSignedIn, (viewer, { body, reply, params }) => handle(viewer, body, reply, params));
}

async function endpointsList(web: WebContext, csrf: string, attempt?: { problem: string; entered: Entered }): Promise<VNode> {
  const endpoints = await listEndpoints(web.ctx.db);
  const recent = await recentDeliveries(web.ctx.db, endpoints.map((endpoint) => endpoint.id), LISTED_DELIVERIES);
  return <EndpointsList endpoints={endpoints} recent={recent} csrf={csrf} attempt={attempt} />;
}

function enteredFrom(body: unknown): Entered {
  const trimmed = (name: string) => formField(body, name)?.trim() || undefined;
  return { key: trimmed('key'), url: trimmed('url'), events: formFields(body, 'events'), secret_env: trimmed('secret_env') };
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || 'form'}: ${issue.message}`).join('; ');
}

function refusal(error: unknown): string {
  if (isAppError(error) && error.status === 400) return error.message;
  throw error;
}

function EndpointsList({ endpoints, recent, csrf, attempt }: { endpoints: EndpointRecord[]; recent: Map<string, EndpointDeliveryRecord[]>; csrf: string; attempt?: { problem: string; entered: Entered } }) {
  return (
    <>
      <h1>Events</h1>
      <p>
        The organization's events go to these endpoints as Standard Webhooks, signed with each endpoint's secret, for chat bridges and other
        tools. Endpoints from the organization file change only with the file.
      </p>
      {endpoints.length ? (
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              <th scope="col">Host</th>
              <th scope="col">Events</th>
              <th scope="col">Status</th>
              <th scope="col">Latest deliveries</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((endpoint) => (
              <tr key={endpoint.id}>
                <th scope="row" data-label="Endpoint">
                  <a href={`/events/${endpoint.id}`}>{endpoint.key}</a>
                  <FromFile managedBy={endpoint.managed_by} />
                </th>
                <td data-label="Host">{hostOf(endpoint.url)}</td>
                <td data-label="Events">{eventsLabel(endpoint.events)}</td>
                <td data-label="Status">
                  <Badge value={endpoint.enabled ? 'enabled' : 'disabled'} />
                </td>
                <td data-label="Latest deliveries">
                  <DeliverySummary deliveries={recent.get(endpoint.id) ?? []} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>No endpoints yet: nothing is sent.</p>
      )}
      <h2>Add an endpoint</h2>
      {attempt ? <p role="alert">Nothing was added: {attempt.problem}</p> : null}
      <EndpointForm action="/events" csrf={csrf} entered={attempt?.entered} submit="Add endpoint" />
    </>
  );
}

function EndpointPage({
  endpoint,
  deliveries,
  csrf,
  problem,
  entered,
  sent,
}: {
  endpoint: EndpointRecord;
  deliveries: EndpointDeliveryRecord[];
  csrf: string;
  problem?: string;
  entered?: Entered;
  sent?: string;
}) {
  const fromFile = endpoint.managed_by === 'file';
  return (
    <>
      <p>
        <a href="/events">Events</a>
      </p>
      <h1>
        Endpoint {endpoint.key}
        <FromFile managedBy={endpoint.managed_by} />
      </h1>
      <dl>
        <dt>URL</dt>
        <dd>
          <code>{endpoint.url}</code>
        </dd>
        <dt>Events</dt>
        <dd>{eventsLabel(endpoint.events)}</dd>
        <dt>Signing secret</dt>
        <dd>{endpoint.secret_env ? <>the value of <code>{endpoint.secret_env}</code> on the server</> : 'generated by the server (shown once, when made)'}</dd>
        <dt>Status</dt>
        <dd>
          <Badge value={endpoint.enabled ? 'enabled' : 'disabled'} />
        </dd>
      </dl>
      {sent ? <p role="status">{sent}</p> : null}
      <form method="post" action={`/events/${endpoint.id}/test`}>
        <input type="hidden" name="csrf" value={csrf} />
        <button type="submit" class="secondary" aria-describedby="test-help">
          Send a test event
        </button>{' '}
        <small id="test-help">
          An <code>endpoint.test</code> event, signed and delivered as the others are.
        </small>
      </form>
      {fromFile ? (
        <p>This endpoint is declared in the organization file (org.yaml): change it there and apply the file.</p>
      ) : (
        <>
          <h2>Change</h2>
          {problem ? <p role="alert">Nothing was changed: {problem}</p> : null}
          <EndpointForm action={`/events/${endpoint.id}`} csrf={csrf} endpoint={endpoint} entered={entered} submit="Save" />
          <div class="actions">
            <form method="post" action={`/events/${endpoint.id}/enabled`}>
              <input type="hidden" name="csrf" value={csrf} />
              <input type="hidden" name="enabled" value={endpoint.enabled ? 'false' : 'true'} />
              <button type="submit" class="secondary">
                {endpoint.enabled ? 'Disable' : 'Enable'}
              </button>
            </form>
            <form method="post" action={`/events/${endpoint.id}/delete`}>
              <input type="hidden" name="csrf" value={csrf} />
              <button type="submit" class="secondary">
                Delete
              </button>
            </form>
          </div>
        </>
      )}
      <h2>Recent deliveries</h2>
      {deliveries.length ? (
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Announced</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((delivery) => (
              <tr key={delivery.event_id}>
                <th scope="row" data-label="Event">
                  {delivery.type} <small class="muted">{delivery.event_id}</small>
                </th>
                <td data-label="Status">
                  <Badge value={delivery.status} />
                </td>
                <td data-label="Attempts">{delivery.attempts}</td>
                <td data-label="Last answer">
                  {delivery.last_status ? `HTTP ${delivery.last_status}` : ''}
                  {delivery.last_error ? <div class="muted">{delivery.last_error}</div> : delivery.last_status ? null : '—'}
                </td>
                <td data-label="Announced">
                  <Time value={delivery.created_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>Nothing sent yet.</p>
      )}
    </>
  );
}

/** Create (with a key) or change (without): the URL, the events, and where the secret comes from. */
function EndpointForm({ action, csrf, endpoint, entered, submit }: { action: string; csrf: string; endpoint?: EndpointRecord; entered?: Entered; submit: string }) {
  const events = entered?.events ?? endpoint?.events ?? [];
  const id = (name: string) => `${endpoint ? 'edit' : 'new'}-${name}`;
  return (
    <form method="post" action={action}>
      <input type="hidden" name="csrf" value={csrf} />
      {endpoint ? null : (
        <label for={id('key')}>
          Key
          <input id={id('key')} name="key" required pattern="[a-z0-9][a-z0-9_\-]{0,63}" value={entered?.key ?? ''} aria-describedby={id('key-help')} />
          <small id={id('key-help')}>Lower-case letters, digits, "_" or "-", such as chat-bridge.</small>
        </label>
      )}
      <label for={id('url')}>
        URL
        <input id={id('url')} name="url" type="url" required value={entered?.url ?? endpoint?.url ?? ''} placeholder="https://chat.example.com/atrium" />
      </label>
      <fieldset>
        <legend>Events (none ticked: all of them)</legend>
        {ORG_EVENT_TYPES.map((type) => (
          <label key={type} for={id(`event-${type}`)}>
            <input type="checkbox" id={id(`event-${type}`)} name="events" value={type} checked={events.includes(type)} /> <code>{type}</code>: {EVENT_MEANINGS[type]}
          </label>
        ))}
      </fieldset>
      <label for={id('secret_env')}>
        Secret environment variable (optional)
        <input id={id('secret_env')} name="secret_env" value={entered?.secret_env ?? endpoint?.secret_env ?? ''} aria-describedby={id('secret-help')} />
        <small id={id('secret-help')}>
          Names a variable holding a whsec_ secret on the server. Left empty, the server {endpoint?.generated_secret ? 'keeps the secret it generated' : 'generates a secret and shows it once'}.
        </small>
      </label>
      <button type="submit">{submit}</button>
    </form>
  );
}

function SecretShown({ endpoint, secret }: { endpoint: EndpointRecord; secret: string }) {
  return (
    <>
      <h1>Endpoint {endpoint.key}: its signing secret</h1>
      <p role="status">
        Give this secret to the receiver at {hostOf(endpoint.url)} now: it verifies each event's signature with it. It is not shown again.
      </p>
      <pre>
        <code>{secret}</code>
      </pre>
      <p>
        <a href={`/events/${endpoint.id}`}>Go to the endpoint</a>
      </p>
    </>
  );
}

function ConfirmDeletion({ endpoint, csrf }: { endpoint: Pick<EndpointRecord, 'id' | 'key' | 'url'>; csrf: string }) {
  return (
    <ConfirmPage
      title={`Delete the endpoint ${endpoint.key}?`}
      action={`/events/${endpoint.id}/delete`}
      csrf={csrf}
      confirm={`Delete ${endpoint.key}`}
      keep={{ href: `/events/${endpoint.id}`, label: `Keep ${endpoint.key}` }}
    >
      Events stop going to {hostOf(endpoint.url)} at once, and the endpoint's signing secret and its deliveries' history are deleted with it. The activity
      log keeps that you deleted it. To stop the events for a while instead, disable the endpoint.
    </ConfirmPage>
  );
}

function DeliverySummary({ deliveries }: { deliveries: EndpointDeliveryRecord[] }) {
  if (!deliveries.length) return <span class="muted">none yet</span>;
  return (
    <ul>
      {deliveries.map((delivery) => (
        <li key={delivery.event_id}>
          <Badge value={delivery.status} /> {delivery.type} <Time value={delivery.created_at} />
        </li>
      ))}
    </ul>
  );
}

function eventsLabel(events: string[]): string {
  return events.length ? events.join(', ') : 'all events';
}
