/**
 * How a content MCP tool is defined and called (DESIGN sections 3 and 5).
 *
 * A tool is a zod schema for its arguments plus a `run` that calls the domain layer; it never holds a rule of
 * its own. The registry is built once at start-up: JSON Schema documents for `tools/list` are generated then,
 * and per request only argument parsing and the domain call run.
 *
 * Results are JSON text content. Every refusal is an `isError: true` result whose one text content is the
 * catalogued error JSON `{"error": {"code", "message", "details"}}`, the same body REST sends; invalid
 * arguments are reported that way too (`invalid_request`, naming each argument), before anything is written.
 * An unknown tool name is a JSON-RPC invalid-params error (MCP tools spec, "Error Handling").
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type Tool,
  type ToolAnnotations,
} from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { AppError, isAppError } from '../../platform/errors.js';
import type { Actor } from '../actor.js';
import type { ContentContext } from '../context.js';
import { contentErrors } from '../errors.js';

/** What a tool call may use besides its arguments. */
export interface ToolCall {
  ctx: ContentContext;
  /** Writes are recorded as the agent whose client opened the session (DESIGN 3). */
  actor: Actor;
}

export interface ContentTool<Input extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** A strict object schema: an unknown argument is refused rather than silently ignored. */
  input: Input;
  annotations: ToolAnnotations;
  run(args: z.output<Input>, call: ToolCall): Promise<unknown>;
}

/** Keeps each tool's `run` typed by its own schema while the registry holds them side by side. */
export function defineTool<Input extends z.ZodType>(tool: ContentTool<Input>): ContentTool {
  return tool as unknown as ContentTool;
}

/** Annotation sets (MCP 2025-03-26 ToolAnnotations). Our tools only touch this service's own content. */
export const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
export const DELETE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

export interface ToolRegistry {
  /** The `tools/list` result, built once. */
  readonly tools: Tool[];
  call(name: string, args: Record<string, unknown> | undefined, call: ToolCall): Promise<CallToolResult>;
}

export function buildToolRegistry(definitions: ContentTool[], log: FastifyBaseLogger): ToolRegistry {
  const byName = new Map<string, ContentTool>();
  for (const tool of definitions) {
    if (byName.has(tool.name)) throw new Error(`duplicate MCP tool ${tool.name}`);
    byName.set(tool.name, tool);
  }
  const tools: Tool[] = definitions.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: inputJsonSchema(tool),
    annotations: tool.annotations,
  }));

  return {
    tools,
    async call(name, args, call) {
      const tool = byName.get(name);
      if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const parsed = tool.input.safeParse(args ?? {});
      if (!parsed.success) return errorResult(invalidArguments(parsed.error));
      try {
        return jsonResult(await tool.run(parsed.data, call));
      } catch (error) {
        if (isAppError(error)) return errorResult(error);
        if (error instanceof z.ZodError) return errorResult(invalidArguments(error));
        log.error({ err: error, tool: name }, 'mcp tool failed');
        return errorResult(new AppError('internal_error', 500, 'internal server error'));
      }
    },
  };
}

function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
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
  return contentErrors.invalidRequest(`invalid arguments: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, { issues });
}

/** A strict object's "unrecognized keys" issue has an empty path; name the keys instead. */
function unknownKeysOf(issue: z.core.$ZodIssue): string | undefined {
  return issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : undefined;
}

/** MCP wants an object schema; the `$schema` line adds nothing a client needs. */
function inputJsonSchema(tool: ContentTool): Tool['inputSchema'] {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  if (schema.type !== 'object') throw new Error(`MCP tool ${tool.name}: arguments must be an object schema`);
  return schema as Tool['inputSchema'];
}
