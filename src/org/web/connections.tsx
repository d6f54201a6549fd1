/**
 * GET /connections and POST /connections/disconnect (DESIGN 4.6, spec 5.1): the applications a person
 * has connected, told apart by client id and redirect host, with the scopes each holds and when it was first and
 * last used; Disconnect (one, or every ticked one) revokes every token of that client for that person, so its
 * next call answers 401. An application named like a declared agent is marked as not being that agent.
 */
import { ColumnHeads } from './parts.js';
import type { FastifyInstance } from 'fastify';
import { disconnectClient, listConnections, type Connection } from '../../auth/index.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { formatTime } from './format.js';
import { listReachableAgents } from '../agents/records.js';
import { formField, formFields, sendCsrfFailure, sendPersonalPage, type WebContext } from './respond.js';
import { signInUrl } from './return-to.js';
import { currentSession } from './sessions.js';

export function registerConnectionsPage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;

  app.get('/connections', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/connections'), 303);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    const connections = await listConnections(ctx, session.person.id);

    const agentNames = new Set((await listReachableAgents(ctx.db)).map((agent) => agent.name.toLowerCase()));
    const body = <Connections connections={connections} agentNames={agentNames} csrf={csrf} />;
    return sendPersonalPage(web, reply, session, csrf, 'Connected applications', body);
  });

  app.post('/connections/disconnect', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/connections'), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    // One row's Disconnect, or every ticked row's with "Disconnect the selected applications".
    const only = formField(request.body, 'only');
    const clientIds = only ? [only] : formFields(request.body, 'client_id');
    for (const clientId of clientIds.slice(0, 100)) await disconnectClient(ctx, session.person.id, clientId);
    return reply.redirect('/connections', 303);
  });
}

function Connections({ connections, agentNames, csrf }: { connections: Connection[]; agentNames: ReadonlySet<string>; csrf: string }) {
  if (!connections.length) {
    return (
      <>
        <h1>Connected applications</h1>
        <p>No applications are connected.</p>
      </>
    );
  }
  return (
    <>
      <h1>Connected applications</h1>
      <p>
        Each application is named as it registered itself; its client id and where it sends you back tell two with the same name apart. An
        application is not one of the organization's agents, whatever it calls itself.
      </p>
      <form method="post" action="/connections/disconnect">
        <input type="hidden" name="csrf" value={csrf} />
        <table class="stack">
          <ColumnHeads names={['Application', 'Permissions', 'Connected', 'Last used']} action="Action" />
          <tbody>
            {connections.map((connection) => (
              <tr key={connection.clientId}>
                <th scope="row">
                  <input type="checkbox" id={`pick-${connection.clientId}`} name="client_id" value={connection.clientId} />{' '}
                  <label class="inline" for={`pick-${connection.clientId}`}>
                    {connection.clientName}
                  </label>
                  <br />
                  <small>
                    application
                    {agentNames.has(connection.clientName.toLowerCase()) ? (
                      <>
                        , <strong>not the organization's agent of that name</strong>
                      </>
                    ) : null}
                    ; client id <code>{connection.clientId}</code>; returns to {connection.redirectHosts.join(', ')}
                  </small>
                </th>
                <td data-label="Permissions">
                  {connection.scopes.length ? (
                    <ul>
                      {connection.scopes.map((scope) => (
                        <li key={scope}>{scope}</li>
                      ))}
                    </ul>
                  ) : (
                    'none'
                  )}
                </td>
                <td data-label="Connected">{formatTime(connection.connectedAt)}</td>
                <td data-label="Last used">{formatTime(connection.lastUsedAt)}</td>
                <td>
                  <button type="submit" name="only" value={connection.clientId} aria-label={`Disconnect ${connection.clientName} (${connection.clientId})`}>
                    Disconnect
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <div class="actions">
          <button type="submit" name="selected" value="1">
            Disconnect the selected applications
          </button>
        </div>
      </form>
    </>
  );
}
