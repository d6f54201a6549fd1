/**
 * The MCP tool registry every Atrium MCP server uses (content: DESIGN 3 and 5; org: DESIGN 4.3).
 *
 * A tool is a strict zod schema for its arguments plus a `run` over the domain layer; it holds no rule of its
 * own. The registry is built once at start-up: JSON Schema documents for `tools/list` are generated then,
 * and per request only argument parsing and the domain call run. A service extends `McpTool` with what its
 * endpoint needs to know about a tool (the org's OAuth scope) and reads it back with `find`.
 *
 * Results are JSON text content. Every refusal is an `isError: true` result whose one text content is the
 * catalogued error JSON `{"error": {"code", "message", "details"}}`, the same body REST sends; invalid
 * arguments are reported that way too (`invalid_request`, naming each argument), before anything runs.
 * An unknown tool name is a JSON-RPC invalid-params error (MCP tools spec, "Error Handling").
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type Tool, type ToolAnnotations } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { isDatabaseUnreachable } from '../database-outage.js';
import { isAppError, platformErrors, type AppError } from '../errors.js';

/** `Call` is what a call may use besides its arguments (the service context, the caller). */
export interface McpTool<Call, Input extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** A strict object schema: an unknown argument is refused rather than silently ignored. */
  input: Input;
  /**
   * The result's schema, when the tool declares one: listed as its `outputSchema`, and each result then carries
   * the same object as `structuredContent` beside its JSON text (MCP 2025-06-18, "Structured Content").
   */
  output?: z.ZodType;
  annotations: ToolAnnotations;
  run(args: z.output<Input>, call: Call): Promise<unknown>;
}

export interface McpToolRegistry<Call, Definition extends McpTool<Call> = McpTool<Call>> {
  /** The `tools/list` result, built once; every tool, whatever the caller may call. */
  readonly tools: Tool[];
  /** A tool's definition by name; undefined for an unknown tool. */
  find(name: string): Definition | undefined;
  call(name: string, args: Record<string, unknown> | undefined, call: Call): Promise<CallToolResult>;
}

export function buildMcpToolRegistry<Call, Definition extends McpTool<Call>>(
  definitions: readonly Definition[],
  log: FastifyBaseLogger,
): McpToolRegistry<Call, Definition> {
  const byName = new Map<string, Definition>();
  for (const tool of definitions) {
    if (byName.has(tool.name)) throw new Error(`duplicate MCP tool ${tool.name}`);
    byName.set(tool.name, tool);
  }
  const tools: Tool[] = definitions.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: objectJsonSchema(tool.name, tool.input, 'input'),
    ...(tool.output ? { outputSchema: objectJsonSchema(tool.name, tool.output, 'output') } : {}),
    annotations: tool.annotations,
  }));

  return {
    tools,
    find: (name) => byName.get(name),
    async call(name, args, call) {
      const tool = byName.get(name);
      if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const parsed = tool.input.safeParse(args ?? {});
      if (!parsed.success) return errorResult(invalidArguments(parsed.error));
      try {
        return jsonResult(await tool.run(parsed.data, call), tool.output !== undefined);
      } catch (error) {
        if (isAppError(error)) return errorResult(error);
        if (error instanceof z.ZodError) return errorResult(invalidArguments(error));
        if (isDatabaseUnreachable(error)) {
          log.warn({ err: error, tool: name }, 'the database cannot be reached');
          return errorResult(platformErrors.unavailable());
        }
        log.error({ err: error, tool: name }, 'mcp tool failed');
        return errorResult(platformErrors.internal());
      }
    },
  };
}

function jsonResult(value: unknown, structured: boolean): CallToolResult {
  const result: CallToolResult = { content: [{ type: 'text', text: jsonText(value) }] };
  if (structured) result.structuredContent = value as Record<string, unknown>;
  return result;
}

/**
 * A frozen result is a shared, unchanging one (content/read-cache.ts freezes what it keeps, deeply), so its
 * JSON is worked out once instead of on every call that returns it.
 */
const jsonOfFrozen = new WeakMap<object, string>();

function jsonText(value: unknown): string {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return JSON.stringify(value);
  let text = jsonOfFrozen.get(value);
  if (text === undefined) jsonOfFrozen.set(value, (text = JSON.stringify(value)));
  return text;
}

function errorResult(error: AppError): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(error.toJSON()) }], isError: true };
}

/** Names every failing argument, in the same `details.issues` shape REST uses for a bad body. */
function invalidArguments(error: z.ZodError): AppError {
  const issues = error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join('.') : unknownKeysOf(issue) ?? '(arguments)',
    message: issue.message,
  }));
  const summary = issues.map((issue) => `${issue.field}: ${issue.message}`).join('; ');
  return platformErrors.invalidRequest(`invalid arguments: ${summary}`, { issues });
}

/** A strict object's "unrecognized keys" issue has an empty path; name the keys instead. */
function unknownKeysOf(issue: z.core.$ZodIssue): string | undefined {
  return issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : undefined;
}

/** MCP wants object schemas for arguments and results; the `$schema` line adds nothing a client needs. */
export function objectJsonSchema(name: string, schema: z.ZodType, io: 'input' | 'output'): Tool['inputSchema'] {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  if (json.type !== 'object') throw new Error(`MCP tool ${name}: its ${io} must be an object schema`);
  return json as Tool['inputSchema'];
}
