/**
 * GET /connect: how to connect an AI client, with this service's own URLs filled in — the organization MCP
 * server (OAuth 2.1: the client opens the sign-in and consent pages) and, when one is configured, the content
 * MCP server (the content API secret as the bearer token). Each client's set-up follows its documentation
 * (checked November 2026); README.md "Connect a client" shows the same snippets for the default URLs (a test
 * keeps them equal). Public: it describes the service, no one's data, and names no secret.
 */
import type { FastifyInstance } from 'fastify';
import { ORG_MCP_PATH } from '../mcp/server.js';
import { sendPage, sendPersonalPage, type WebContext } from './respond.js';
import { issueCsrfToken } from './csrf.js';
import { currentSession } from './sessions.js';

export interface ClientSetUp {
  client: string;
  /** What to do with the snippet, in words (plain text). */
  how: string;
  language: 'sh' | 'json' | 'ts' | 'python';
  code: string;
}

/** The Inspector's own requirement (its package.json `engines`), above the Node.js 20 Atrium runs on. */
export const INSPECTOR_NODE = '22.19';

/** mcp-remote refuses plain http to anything but localhost unless told (`--allow-http`). */
function mcpRemoteArgs(url: string): string {
  const { protocol, hostname } = new URL(url);
  const allowHttp = protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(hostname);
  return [`"-y"`, `"mcp-remote"`, `"${url}"`, ...(allowHttp ? [`"--allow-http"`] : [])].join(', ');
}

/** The organization MCP server: every client signs the person in with OAuth, nothing to copy but the URL. */
export function orgSetUps(url: string): ClientSetUp[] {
  return [
    {
      client: 'Claude Code',
      how: 'Add the server, then run /mcp in Claude Code, choose atrium and Authenticate: your browser opens the sign-in and consent pages.',
      language: 'sh',
      code: `claude mcp add --transport http atrium ${url}`,
    },
    {
      client: 'Claude Desktop',
      how: 'Through mcp-remote, which signs you in from your browser: add this to claude_desktop_config.json (Settings, Developer, Edit Config) and restart Claude Desktop.',
      language: 'json',
      code: `{
  "mcpServers": {
    "atrium": {
      "command": "npx",
      "args": [${mcpRemoteArgs(url)}]
    }
  }
}`,
    },
    {
      client: 'Cursor',
      how: 'In ~/.cursor/mcp.json (every project) or .cursor/mcp.json (one project); Cursor offers to sign in when it connects.',
      language: 'json',
      code: `{
  "mcpServers": {
    "atrium": { "url": "${url}" }
  }
}`,
    },
    {
      client: 'VS Code',
      how: 'In .vscode/mcp.json in your workspace; VS Code offers to sign in when the server starts.',
      language: 'json',
      code: `{
  "servers": {
    "atrium": { "type": "http", "url": "${url}" }
  }
}`,
    },
    {
      client: 'MCP Inspector',
      how: `It needs Node.js ${INSPECTOR_NODE} or newer. It opens in your browser; Connect runs the sign-in.`,
      language: 'sh',
      code: `npx @modelcontextprotocol/inspector --server-url ${url}`,
    },
    {
      client: 'TypeScript SDK',
      how: 'With @modelcontextprotocol/client, give the transport an OAuthClientProvider (it keeps the registration and tokens and opens the authorization URL); when connect fails with UnauthorizedError, pass the code your redirect URL receives to transport.finishAuth(code) and connect again.',
      language: 'ts',
      code: `import { Client, StreamableHTTPClientTransport, type OAuthClientProvider } from '@modelcontextprotocol/client';

declare const authProvider: OAuthClientProvider;
const transport = new StreamableHTTPClientTransport(new URL('${url}'), { authProvider });
await new Client({ name: 'my-agent', version: '1.0.0' }).connect(transport);`,
    },
    {
      client: 'Python SDK',
      how: 'With the mcp package, pass an OAuthClientProvider (from mcp.client.auth: your client metadata, token storage and the handlers that open the browser and receive the redirect) as auth.',
      language: 'python',
      code: `from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

async with streamablehttp_client("${url}", auth=oauth) as (read, write, _):
    async with ClientSession(read, write) as session:
        await session.initialize()`,
    },
  ];
}

/** The content MCP server: the content API secret as the bearer token, no OAuth. */
export function contentSetUps(url: string): ClientSetUp[] {
  return [
    {
      client: 'Claude Code',
      how: 'In a shell where CONTENT_API_SECRET is exported:',
      language: 'sh',
      code: `claude mcp add --transport http atrium-content ${url} --header "Authorization: Bearer $CONTENT_API_SECRET"`,
    },
    {
      client: 'Claude Desktop',
      how: 'Through mcp-remote, with the header in an environment variable (no spaces inside the argument: some clients split arguments at spaces).',
      language: 'json',
      code: `{
  "mcpServers": {
    "atrium-content": {
      "command": "npx",
      "args": [${mcpRemoteArgs(url)}, "--header", "Authorization:\${AUTH_HEADER}"],
      "env": { "AUTH_HEADER": "Bearer <the content API secret>" }
    }
  }
}`,
    },
    {
      client: 'Cursor',
      how: 'Cursor reads the secret from the environment it was started in:',
      language: 'json',
      code: `{
  "mcpServers": {
    "atrium-content": {
      "url": "${url}",
      "headers": { "Authorization": "Bearer \${env:CONTENT_API_SECRET}" }
    }
  }
}`,
    },
    {
      client: 'VS Code',
      how: 'VS Code asks for the secret once and keeps it:',
      language: 'json',
      code: `{
  "inputs": [
    { "type": "promptString", "id": "content-api-secret", "description": "Atrium content API secret", "password": true }
  ],
  "servers": {
    "atrium-content": {
      "type": "http",
      "url": "${url}",
      "headers": { "Authorization": "Bearer \${input:content-api-secret}" }
    }
  }
}`,
    },
    {
      client: 'MCP Inspector',
      how: `It needs Node.js ${INSPECTOR_NODE} or newer. Before Connect, add the header Authorization with the value Bearer and the secret (Authentication in its connection settings).`,
      language: 'sh',
      code: `npx @modelcontextprotocol/inspector --server-url ${url}`,
    },
    {
      client: 'TypeScript SDK',
      how: 'With @modelcontextprotocol/client, the secret in the request headers:',
      language: 'ts',
      code: `import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const client = new Client({ name: 'my-agent', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL('${url}'), {
    requestInit: { headers: { authorization: \`Bearer \${process.env.CONTENT_API_SECRET}\` } },
  }),
);
console.log(await client.callTool({ name: 'search_content', arguments: { query: 'release' } }));
await client.close();`,
    },
    {
      client: 'Python SDK',
      how: 'With the mcp package, the secret in the headers:',
      language: 'python',
      code: `import asyncio
import os

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main():
    headers = {"Authorization": f"Bearer {os.environ['CONTENT_API_SECRET']}"}
    async with streamablehttp_client("${url}", headers=headers) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            print(await session.call_tool("search_content", {"query": "release"}))


asyncio.run(main())`,
    },
  ];
}

function SetUps({ prefix, setUps }: { prefix: string; setUps: ClientSetUp[] }) {
  return setUps.map((setUp) => (
    <section key={setUp.client} aria-labelledby={`${prefix}-${slug(setUp.client)}`}>
      <h3 id={`${prefix}-${slug(setUp.client)}`}>{setUp.client}</h3>
      <p>{setUp.how}</p>
      <pre class="snippet">
        <code>{setUp.code}</code>
      </pre>
    </section>
  ));
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

export function registerConnectPage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;
  const orgUrl = `${ctx.config.publicUrl}${ORG_MCP_PATH}`;
  const contentUrl = ctx.config.content ? `${ctx.config.content.url}/mcp` : undefined;
  app.get('/connect', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return sendPage(reply, 200, 'Connect a client', <ConnectPage orgUrl={orgUrl} contentUrl={contentUrl} />);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    return sendPersonalPage(web, reply, session, csrf, 'Connect a client', <ConnectPage orgUrl={orgUrl} contentUrl={contentUrl} />);
  });
}

function ConnectPage({ orgUrl, contentUrl }: { orgUrl: string; contentUrl?: string }) {
  return (
    <>
      <h1>Connect a client</h1>
      <p>
        Give an AI client the organization's MCP endpoint, <code>{orgUrl}</code>. The client signs you in with OAuth: your browser opens this
        service's sign-in page, then asks what the client may do for you. You can disconnect it at any time on{' '}
        <a href="/connections">Connected applications</a>; <a href="/docs">MCP tools</a> lists what it can call.
      </p>
      <nav aria-label="On this page">
        <ul>
          <li>
            <a href="#organization">Organization MCP server</a>
          </li>
          {contentUrl ? (
            <li>
              <a href="#content">Content MCP server</a>
            </li>
          ) : null}
        </ul>
      </nav>
      <h2 id="organization">Organization MCP server</h2>
      <SetUps prefix="org" setUps={orgSetUps(orgUrl)} />
      {contentUrl ? (
        <>
          <h2 id="content">Content MCP server</h2>
          <p>
            The website's content (blog, changelog, roadmap) has its own MCP endpoint, <code>{contentUrl}</code>. It takes no OAuth: send the
            content API secret as the bearer token, <code>Authorization: Bearer &lt;secret&gt;</code>. The secret is{' '}
            <code>CONTENT_API_SECRET</code>, or, when the content service generated it, the file <code>secrets/content-api-secret</code> in its
            data directory (<code>./data</code> by default); the examples read it from the environment variable <code>CONTENT_API_SECRET</code>.
          </p>
          <SetUps prefix="content" setUps={contentSetUps(contentUrl)} />
        </>
      ) : null}
    </>
  );
}
