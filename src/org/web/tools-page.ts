/**
 * GET /docs on the org origin: the organization MCP tools this service serves, each with the OAuth scope a
 * token needs to call it (DESIGN 4.3) and its arguments, read from the same tool list the MCP endpoint
 * serves, so a tool added there appears here. Public: it describes the service, no one's data.
 */
import type { FastifyInstance } from 'fastify';
import { SCOPES } from '../../auth/scopes.js';
import { objectJsonSchema } from '../../platform/mcp/tools.js';
import { toOrgTool, type OrgToolDefinition } from '../mcp/tools.js';
import { ORG_MCP_PATH, ORG_MCP_PROTOCOL } from '../mcp/server.js';
import { html } from './html.js';
import { sendPage, type WebContext } from './respond.js';

export function registerToolsPage(app: FastifyInstance, web: WebContext, definitions: readonly OrgToolDefinition[]): void {
  const endpoint = `${web.ctx.config.publicUrl}${ORG_MCP_PATH}`;
  // As the registry serves them, with the arguments it adds (idempotency_key, wait_seconds).
  const tools = definitions.map((definition) => toOrgTool(definition));
  const rows = tools.map((tool) => {
    const schema = objectJsonSchema(tool.name, tool.input, 'input') as { properties?: Record<string, unknown>; required?: string[] };
    const args = Object.keys(schema.properties ?? {}).map((name) => (schema.required?.includes(name) ? name : `${name}?`));
    return html`<tr>
<th scope="row"><code>${tool.name}</code></th>
<td data-label="Scope">${tool.scope ? html`<code>${tool.scope}</code><br><small>${SCOPES[tool.scope]}</small>` : 'any valid token'}</td>
<td data-label="Arguments">${args.length ? html`<code>${args.join(', ')}</code>` : '—'}</td>
<td data-label="What it does">${tool.description}</td>
</tr>`;
  });
  const body = html`<h1>Organization MCP tools</h1>
<p>The MCP endpoint is <code>${endpoint}</code> (Streamable HTTP, protocol ${ORG_MCP_PROTOCOL}). A client connects with
OAuth 2.1: the first request without a token answers <code>401</code> with a <code>WWW-Authenticate</code> header naming
the protected-resource metadata, from which the client discovers everything else. Each tool needs the scope shown; a
token without it gets <code>403</code> with <code>error="insufficient_scope"</code>.</p>
<table class="stack">
<thead><tr><th scope="col">Tool</th><th scope="col">Scope</th><th scope="col">Arguments</th><th scope="col">What it does</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`;
  app.get('/docs', async (_request, reply) => sendPage(reply, 200, 'MCP tools', body));
}
