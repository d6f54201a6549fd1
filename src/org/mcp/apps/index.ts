/**
 * MCP Apps (extension `io.modelcontextprotocol/ui`, spec 2026-01-26; issue 21 item 4, DESIGN 4.9): three
 * `ui://` resources a host renders beside the chat — the approval card, an operation's timeline and the task
 * board — linked from their tools by `_meta.ui.resourceUri`. Only a client that declared the extension (with
 * the HTML profile) sees the links and the app data in results, so every other client's `tools/list` and
 * results are exactly today's: the text result stays the fallback.
 *
 * The constants are the extension's own (`@modelcontextprotocol/ext-apps/server` exports them too); they are
 * written here so the server does not depend on a package whose app side bundles a second SDK.
 */
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type CallToolResult, type Server, type Tool } from '@modelcontextprotocol/server';
import type { Scope } from '../../../auth/index.js';
import type { McpClient } from '../../../platform/mcp/endpoint.js';
import type { OrgContext } from '../../context.js';
import { decisionContexts, decisionsFor, findDecisionRecord, type DecisionRecord } from '../../decisions/records.js';
import { getPerson } from '../../people/records.js';
import { organization } from '../../schema.js';
import type { OrgPrincipal } from '../tools.js';
import { renderAppDocument, type AppView } from './documents.js';

export const APPS_EXTENSION = 'io.modelcontextprotocol/ui';
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** Where a result's app data travels: `_meta`, which hosts hand the app and keep out of the model's context. */
const APP_DATA_KEY = 'atrium/app';

/** Spec "Client<>Server Capability Negotiation": the server declares the extension beside `resources`. */
const APPS_SERVER_CAPABILITIES = { resources: {}, extensions: { [APPS_EXTENSION]: {} } };
/**
 * The contract's revision (DESIGN 4.9): its clients are answered tools only, as before, so they see no apps at
 * all — its capabilities have no `extensions`, where a host would say it renders them.
 */
const CONTRACT_REVISION = '2025-06-18';

interface AppResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  view: AppView;
  /** Reading it needs one of these scopes (the read scopes of the tools it belongs to); null: any valid token. */
  scopes: readonly Scope[] | null;
  tools: readonly string[];
}

const APPS: readonly AppResource[] = [
  {
    uri: 'ui://atrium-org/approval-card',
    name: 'approval_card',
    title: 'Approval card',
    description: 'An action paused for a person: capability, agent, risk, reasons, exact arguments and cost, with the way to decide.',
    view: 'approval',
    scopes: ['integrations:read', 'governance:admin'],
    tools: ['execute_capability', 'list_decisions'],
  },
  {
    uri: 'ui://atrium-org/operation-timeline',
    name: 'operation_timeline',
    title: 'Operation timeline',
    description: "An operation's status and progress events, and the decision it waits for, if any.",
    view: 'timeline',
    scopes: null,
    tools: ['get_operation'],
  },
  {
    uri: 'ui://atrium-org/task-board',
    name: 'task_board',
    title: 'Task board',
    description: 'Tasks in your spaces, in a column per status.',
    view: 'tasks',
    scopes: ['task:read'],
    tools: ['list_tasks'],
  },
];

/** Tools whose results carry the decisions an app shows (their approval card's facts and how to decide). */
const DECIDING_TOOLS = new Set(['execute_capability', 'get_operation', 'list_decisions']);

/** What the approval card needs beyond the tool's own result, in the result's `_meta[APP_DATA_KEY]`. */
interface AppData {
  /** The decision page, to which a decision id is appended (DESIGN 4.4: `/inbox/decisions/:id`). */
  decision_page: string;
  /** `organization.in_app_decisions`: may the app resolve through the host, or does it open the page. */
  in_app_decisions: boolean;
  /** The decision a paused operation waits for (list_decisions carries its own). */
  decisions?: DecisionRecord[];
  /** Each shown decision's cost in budget units, by id. */
  costs: Record<string, number>;
  /** The shown decisions this person may resolve through this client with resolve_decision. */
  resolvable: string[];
}

export interface OrgApps {
  /** `tools` as this client gets them: with `_meta.ui` links when it renders apps (the same array for the same list). */
  link(client: McpClient, tools: readonly Tool[]): readonly Tool[];
  /**
   * Declares the extension and `resources`, and installs `resources/list` and `resources/read`, on one request's
   * server — for every revision but the contract's.
   */
  install(server: Server, call: { client: McpClient; principal: OrgPrincipal }): void;
  /** Adds the app data to a deciding tool's result, for a client that renders apps. */
  withAppData(tool: string, result: CallToolResult, call: { client: McpClient; principal: OrgPrincipal }): Promise<CallToolResult>;
}

/** Built once at start-up: the documents are rendered here, and each tool list is linked once, when first asked. */
export function orgApps(ctx: OrgContext): OrgApps {
  const documents = new Map(APPS.map((app) => [app.uri, renderAppDocument(app.view, app.title)]));
  const linkedLists = new WeakMap<readonly Tool[], readonly Tool[]>();
  const linkTool = (tool: Tool): Tool => {
    const app = APPS.find((candidate) => candidate.tools.includes(tool.name));
    return app ? { ...tool, _meta: { ...tool._meta, ui: { resourceUri: app.uri } } } : tool;
  };
  const listed = APPS.map(({ uri, name, title, description }) => ({ uri, name, title, description, mimeType: APP_MIME_TYPE }));

  return {
    link(client, tools) {
      if (!rendersApps(client)) return tools;
      let linked = linkedLists.get(tools);
      if (!linked) linkedLists.set(tools, (linked = tools.map(linkTool)));
      return linked;
    },

    install(server, { client, principal }) {
      if (client.protocolVersion === CONTRACT_REVISION) return;
      server.registerCapabilities(APPS_SERVER_CAPABILITIES);
      server.setRequestHandler('resources/list', () => ({ resources: listed }));
      server.setRequestHandler('resources/read', ({ params }) => {
        const app = APPS.find((candidate) => candidate.uri === params.uri);
        // The SDK's resource miss: -32602 with `data.uri` (a MUST in 2026-07-28, and what earlier SDKs sent).
        if (!app) throw new ResourceNotFoundError(params.uri);
        if (app.scopes && !app.scopes.some((scope) => principal.scopes.includes(scope))) {
          throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `the resource ${app.uri} needs one of the scopes ${app.scopes.join(', ')}`);
        }
        // Spec "UI Resource Format": no external domain is needed, so no `csp`; the host's restrictive default applies.
        return { contents: [{ uri: app.uri, mimeType: APP_MIME_TYPE, text: documents.get(app.uri)!, _meta: { ui: { prefersBorder: true } } }] };
      });
    },

    async withAppData(tool, result, { client, principal }) {
      // Only a finished call's result: a task handle (task-augmented calls) carries no content to draw.
      if (!DECIDING_TOOLS.has(tool) || result.isError || !Array.isArray(result.content) || !rendersApps(client)) return result;
      const data = await appData(ctx, tool, (result.structuredContent ?? {}) as Record<string, unknown>, principal);
      return { ...result, _meta: { ...result._meta, [APP_DATA_KEY]: data } };
    },
  };
}

/** Spec "Client (Host) Capabilities": the extension with the HTML profile among its `mimeTypes` (past the contract's revision). */
export function rendersApps(client: McpClient): boolean {
  if (client.protocolVersion === CONTRACT_REVISION) return false;
  const extensions = client.capabilities.extensions as Record<string, { mimeTypes?: unknown }> | undefined;
  const mimeTypes = extensions?.[APPS_EXTENSION]?.mimeTypes;
  return Array.isArray(mimeTypes) && mimeTypes.includes(APP_MIME_TYPE);
}

async function appData(ctx: OrgContext, tool: string, value: Record<string, unknown>, principal: OrgPrincipal): Promise<AppData> {
  const [org] = await ctx.db.select({ inApp: organization.inAppDecisions }).from(organization).limit(1);
  let decisions: DecisionRecord[];
  let own: DecisionRecord[] | undefined;
  if (tool === 'list_decisions') {
    decisions = (value.decisions as DecisionRecord[] | undefined) ?? [];
  } else {
    // A paused operation the caller was shown (execute_capability, get_operation already checked it is theirs).
    const decision = typeof value.decision_id === 'string' && value.status === 'paused' ? await findDecisionRecord(ctx.db, value.decision_id) : undefined;
    decisions = own = decision ? [decision] : [];
  }
  const ids = decisions.map((decision) => decision.id);
  const contexts = await decisionContexts(ctx.db, ids);
  return {
    decision_page: new URL('/inbox/decisions/', ctx.config.publicUrl).href,
    in_app_decisions: org?.inApp ?? false,
    ...(own ? { decisions: own } : {}),
    costs: Object.fromEntries(ids.flatMap((id) => (contexts.has(id) ? [[id, contexts.get(id)!.cost]] : []))),
    resolvable: await resolvableIds(ctx, ids, principal),
  };
}

/** The decisions resolve_decision would take from this person through this client (decision-tools.ts's rule). */
async function resolvableIds(ctx: OrgContext, ids: readonly string[], principal: OrgPrincipal): Promise<string[]> {
  if (ids.length === 0 || !principal.scopes.includes('governance:admin')) return [];
  const person = await getPerson(ctx.db, principal.personId);
  if (!person) return [];
  const visible = await decisionsFor(ctx.db, { person, clientId: principal.clientId }, { status: 'pending' });
  return visible.filter((decision) => ids.includes(decision.id)).map((decision) => decision.id);
}
