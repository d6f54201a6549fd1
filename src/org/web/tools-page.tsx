/**
 * GET /docs on the org origin: the organization MCP tools this service serves, each with the OAuth scope a
 * token needs to call it (DESIGN 4.3) and its arguments, read from the same tool list the MCP endpoint
 * serves, so a tool added there appears here. Public: it describes the service, no one's data.
 */
import type { FastifyInstance } from 'fastify';
import { SCOPES } from '../../auth/scopes.js';
import { objectJsonSchema } from '../../platform/mcp/tools.js';
import { toOrgTool, type OrgTool, type OrgToolDefinition } from '../mcp/tools.js';
import { ORG_MCP_PATH, ORG_MCP_PROTOCOL } from '../mcp/server.js';
import { TOOL_PRESENTATION } from '../mcp/presentation.js';
import { sendPage, type WebContext } from './respond.js';

export function registerToolsPage(app: FastifyInstance, web: WebContext, definitions: readonly OrgToolDefinition[]): void {
  const endpoint = `${web.ctx.config.publicUrl}${ORG_MCP_PATH}`;
  // As the registry serves them, with the arguments it adds (idempotency_key, wait_seconds).
  const tools = definitions.map((definition) => describeTool(toOrgTool(definition)));
  app.get('/docs', async (_request, reply) => sendPage(reply, 200, 'MCP tools', <ToolsPage endpoint={endpoint} tools={tools} />));
}

interface ToolDescription {
  name: string;
  /** The title and hints newer MCP clients show (mcp/presentation.ts), in words; absent for a tool without them. */
  title?: string;
  hints?: string;
  description: string;
  scope: OrgTool['scope'];
  /** Argument names, the optional ones marked `?`. */
  args: string[];
  input: string;
  output?: string;
}

/** What the page shows of a tool, worked out once: its schemas as JSON Schema. */
function describeTool(tool: OrgTool): ToolDescription {
  const input = objectJsonSchema(tool.name, tool.input, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  const args = Object.keys(input.properties ?? {}).map((name) => (input.required?.includes(name) ? name : `${name}?`));
  const output = tool.output ? JSON.stringify(objectJsonSchema(tool.name, tool.output, 'output'), null, 2) : undefined;
  const presentation = TOOL_PRESENTATION[tool.name];
  return {
    name: tool.name,
    title: presentation?.title,
    hints: presentation && hintWords(presentation.annotations),
    description: tool.description,
    scope: tool.scope,
    args,
    input: JSON.stringify(input, null, 2),
    output,
  };
}

/** The four MCP tool hints as a person reads them. */
function hintWords(hints: (typeof TOOL_PRESENTATION)[string]['annotations']): string {
  if (hints.readOnlyHint) return 'Reads only.';
  return [
    hints.destructiveHint ? 'Changes things for good' : 'Only adds',
    hints.idempotentHint ? 'the same call again changes nothing more' : 'each call acts again',
    hints.openWorldHint ? 'reaches beyond the organization (agents, connectors)' : 'stays within the organization',
  ].join('; ') + '.';
}

function ToolsPage({ endpoint, tools }: { endpoint: string; tools: ToolDescription[] }) {
  return (
    <>
      <h1>Organization MCP tools</h1>
      <p>
        The MCP endpoint is <code>{endpoint}</code> (Streamable HTTP, protocol {ORG_MCP_PROTOCOL}). A client connects with OAuth 2.1: the
        first request without a token answers <code>401</code> with a <code>WWW-Authenticate</code> header naming the protected-resource
        metadata, from which the client discovers everything else. Each tool needs the scope shown; a token without it gets <code>403</code>{' '}
        with <code>error="insufficient_scope"</code>. Arguments marked <code>?</code> are optional.
      </p>
      <nav aria-label="Tools" class="tool-index">
        <ul>
          {tools.map((tool) => (
            <li key={tool.name}>
              <a href={`#${tool.name}`}>
                <code>{tool.name}</code>
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {tools.map((tool) => (
        <ToolBlock key={tool.name} tool={tool} />
      ))}
    </>
  );
}

/** One block per tool: its name, the scope it needs, what it does; its schemas one click away. */
function ToolBlock({ tool }: { tool: ToolDescription }) {
  const { args, output } = tool;
  return (
    <section class="tool" id={tool.name} aria-labelledby={`${tool.name}-name`}>
      <h2 id={`${tool.name}-name`}>
        <code>{tool.name}</code>
      </h2>
      {tool.title ? (
        <p class="tool-title">
          {tool.title}. {tool.hints}
        </p>
      ) : null}
      <p class="scope">
        Scope:{' '}
        {tool.scope ? (
          <>
            <code>{tool.scope}</code> — {SCOPES[tool.scope]}
          </>
        ) : (
          'any valid token'
        )}
      </p>
      <p>{tool.description}</p>
      <p class="args">Arguments: {args.length ? <code>{args.join(', ')}</code> : 'none'}</p>
      <details>
        <summary>Input schema</summary>
        <pre>{tool.input}</pre>
      </details>
      {output ? (
        <details>
          <summary>Result schema</summary>
          <pre>{output}</pre>
        </details>
      ) : null}
    </section>
  );
}
