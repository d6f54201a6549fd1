/**
 * GET /connections and POST /connections/disconnect (DESIGN 4.6, spec 5.1): the applications a person
 * has connected, with the scopes each holds; Disconnect revokes every token of that client for that
 * person, so its next call answers 401.
 */
import type { FastifyInstance } from 'fastify';
import { disconnectClient, listConnections } from '../../auth/index.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { html } from './html.js';
import { formField, sendCsrfFailure, sendPage, type WebContext } from './respond.js';
import { signInUrl } from './return-to.js';
import { currentSession } from './sessions.js';

function formatTime(value: string | undefined): string {
  if (!value) return '—';
  return new Date(value).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

export function registerConnectionsPage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;

  app.get('/connections', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/connections'), 303);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    const connections = await listConnections(ctx, session.person.id);

    const body = html`<h1>Connected applications</h1>
${connections.length
  ? html`<table class="stack">
<thead><tr><th scope="col">Application</th><th scope="col">Permissions</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
<tbody>
${connections.map(
  (connection) => html`<tr>
<th scope="row">${connection.clientName}</th>
<td data-label="Permissions">${connection.scopes.length ? html`<ul>${connection.scopes.map((scope) => html`<li>${scope}</li>`)}</ul>` : 'none'}</td>
<td data-label="Connected">${formatTime(connection.connectedAt)}</td>
<td data-label="Last used">${formatTime(connection.lastUsedAt)}</td>
<td><form method="post" action="/connections/disconnect">
<input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="client_id" value="${connection.clientId}">
<button type="submit">Disconnect</button>
</form></td>
</tr>`,
)}
</tbody>
</table>`
  : html`<p>No applications are connected.</p>`}`;
    return sendPage(reply, 200, 'Connected applications', body, { name: session.person.name, csrf });
  });

  app.post('/connections/disconnect', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/connections'), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const clientId = formField(request.body, 'client_id');
    if (clientId) await disconnectClient(ctx, session.person.id, clientId);
    return reply.redirect('/connections', 303);
  });
}
