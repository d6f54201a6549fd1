/**
 * How the org MCP server and its tools present themselves to people choosing and approving tools in a client
 * (DESIGN 4.9, issue 21 item 7): a title, the service's icon served from the org origin, and all four tool
 * annotations, each thought through for that tool.
 *
 * Revision by revision: a `2025-06-18` client gets exactly the answers it always got (`serverInfo` name and
 * version; each tool's name, description, schemas and the hints it always had), since the contract's revision
 * must see no difference. Clients of `2025-11-25` and later — the revision that gave `Implementation` and
 * `Tool` their `icons`, `websiteUrl` and `description` — get the presentation below.
 *
 * `tools/list` lists the tools in the registry's order, which is `orgTools` in server.ts (the order of
 * DESIGN 4.3: service_context first), on every process and after every restart: it is built once from that
 * array, never from a map or the database.
 *
 * Titles and hints are kept here, beside each other, rather than on each tool's definition, so the newer
 * revisions' presentation is one table a reviewer reads at once; a test checks that it covers every tool.
 */
import type { Icon, Implementation, Tool, ToolAnnotations } from '@modelcontextprotocol/server';
import type { McpClient } from '../../platform/mcp/endpoint.js';

/** Where the org origin serves its icon (web/assets.ts): the SVG, and the same drawn at 128 px as PNG. */
export const ORG_ICON_PATH = '/assets/atrium.svg';
export const ORG_ICON_PNG_PATH = '/assets/atrium.png';

/** The first revision whose `Implementation` and `Tool` carry icons (MCP 2025-11-25 changelog, SEP-973). */
const PRESENTING_REVISION = '2025-11-25';

/** Revisions are dates (`YYYY-MM-DD`), so they compare as strings. */
export function presentsIcons(client: McpClient): boolean {
  return client.protocolVersion >= PRESENTING_REVISION;
}

/** A title a person reads, and all four hints (MCP 2025-11-25 `ToolAnnotations`), for one tool. */
interface ToolPresentation {
  title: string;
  annotations: Required<Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>>;
}

/** Reads change nothing, so they are idempotent and never destructive; none of them leaves the organization. */
const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** The hints of a tool that changes something. */
function acts(hints: { destructive: boolean; idempotent: boolean; openWorld: boolean }): ToolPresentation['annotations'] {
  return { readOnlyHint: false, destructiveHint: hints.destructive, idempotentHint: hints.idempotent, openWorldHint: hints.openWorld };
}

/**
 * Every org tool, in the order of `orgTools`. The hints, as the 2025-11-25 schema defines them:
 * `destructiveHint` — may the call do more than add (end, deny or run something irreversible)?
 * `idempotentHint` — does repeating the same call (same idempotency_key aside) leave the world as one call did?
 * `openWorldHint` — may it reach beyond the organization's own records: an agent's webhook, a connector?
 */
export const TOOL_PRESENTATION: Readonly<Record<string, ToolPresentation>> = {
  service_context: { title: 'Who you act for, and your spaces', annotations: READ },
  get_operation: { title: 'Follow an operation', annotations: READ },
  list_agents: { title: "List the organization's agents", annotations: READ },
  // The message goes to the agent's own endpoint; sending it again sends a second message.
  message_agent: { title: 'Message an agent', annotations: acts({ destructive: false, idempotent: false, openWorld: true }) },
  // Every call records a new version; nothing is overwritten (superseded items keep their history).
  record_memory: { title: 'Record in company memory', annotations: acts({ destructive: false, idempotent: false, openWorld: false }) },
  search_memory: { title: 'Search company memory', annotations: READ },
  get_memory: { title: 'Read a memory item and its history', annotations: READ },
  // An assigned, unscheduled task is sent to its agent at once.
  create_task: { title: 'Create a task', annotations: acts({ destructive: false, idempotent: false, openWorld: true }) },
  list_tasks: { title: 'List tasks', annotations: READ },
  get_task: { title: 'Read a task', annotations: READ },
  // The answer is recorded and sent to the task's agent.
  answer_task: { title: "Answer a task's question", annotations: acts({ destructive: false, idempotent: false, openWorld: true }) },
  // Ends the task and its scheduled runs for good, and cancels its agent's work under way.
  cancel_task: { title: 'Cancel a task', annotations: acts({ destructive: true, idempotent: false, openWorld: true }) },
  // Starts an operation (an answer drawn from company memory and tasks); asking again asks again.
  ask: { title: 'Ask the assistant', annotations: acts({ destructive: false, idempotent: false, openWorld: false }) },
  list_capabilities: { title: 'List capabilities', annotations: READ },
  describe_capability: { title: "Describe a capability and the gate's verdict", annotations: READ },
  // Acts on the world through a connector (publish, pay, call a webhook), once per call unless the key repeats.
  execute_capability: { title: 'Run a capability', annotations: acts({ destructive: true, idempotent: false, openWorld: true }) },
  list_decisions: { title: 'List decisions awaiting a person', annotations: READ },
  // Approving runs the paused action (through its connector) and denying fails its operation, each for good;
  // a decision is resolved once, and a person approves it once, so the same call again is refused
  // (invalid_state) and changes nothing more.
  resolve_decision: { title: 'Approve or deny a decision', annotations: acts({ destructive: true, idempotent: true, openWorld: true }) },
};

/** The org's `serverInfo` for a client: the contract's name and version, and for newer revisions its face. */
export function orgServerInfo(base: Implementation, publicUrl: string): (client: McpClient) => Implementation {
  const presented: Implementation = {
    ...base,
    title: 'Atrium',
    description:
      "The organization's people and AI agents working together: company memory, tracked tasks, agents to message, " +
      'and capabilities run through a gate that pauses consequential actions for a person.',
    websiteUrl: publicUrl,
    icons: orgIcons(publicUrl),
  };
  return (client) => (presentsIcons(client) ? presented : base);
}

/**
 * The `tools/list` answer for a client: a `2025-06-18` client gets the list it is given, as it is; a newer one the
 * same list, in the same order, with each tool's title, icons and four hints. Fields others add to the tools
 * (task support, app resources) pass through unchanged, so this composes with them in either order. A list is
 * presented once and remembered, so a list built at start-up costs nothing per request.
 */
export function orgToolPresentation(publicUrl: string): (client: McpClient, tools: readonly Tool[]) => readonly Tool[] {
  const presentedLists = new WeakMap<readonly Tool[], readonly Tool[]>();
  const present = (tool: Tool): Tool => {
    const presentation = TOOL_PRESENTATION[tool.name];
    // A tool without an entry (a test's own tool) is listed as it came.
    if (!presentation) return tool;
    return { ...tool, title: presentation.title, icons: orgIcons(publicUrl), annotations: { ...tool.annotations, ...presentation.annotations } };
  };
  return (client, tools) => {
    if (!presentsIcons(client)) return tools;
    let presented = presentedLists.get(tools);
    if (!presented) presentedLists.set(tools, (presented = tools.map(present)));
    return presented;
  };
}

/**
 * The SVG for every size (MCP 2025-11-25 `Icon.sizes`: "any" for scalable formats), and a PNG, since clients that
 * render icons must support PNG and JPEG but only should support SVG (2025-11-25 schema, `Icon`).
 */
export function orgIcons(publicUrl: string): Icon[] {
  return [
    { src: `${publicUrl}${ORG_ICON_PATH}`, mimeType: 'image/svg+xml', sizes: ['any'] },
    { src: `${publicUrl}${ORG_ICON_PNG_PATH}`, mimeType: 'image/png', sizes: ['128x128'] },
  ];
}
