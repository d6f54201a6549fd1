/**
 * How an org MCP tool is defined (DESIGN 4.3): a strict zod schema for its arguments, the OAuth scope it
 * needs (null: any token), and a `run` over the domain layer. The tool's scope is data on the tool, so
 * the one general scope check (scope-check.ts) covers every tool later issues add.
 *
 * Results are JSON text content; refusals are `isError` results holding the catalogued error JSON.
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type Tool, type ToolAnnotations } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { Scope } from '../../auth/scopes.js';
import { AppError, isAppError } from '../../platform/errors.js';
import type { OrgContext } from '../context.js';
import { orgErrors } from '../errors.js';

/** Who is calling, from the verified access token. */
export interface OrgPrincipal {
  personId: string;
  clientId: string;
  grantId: string;
  scopes: string[];
}

export interface OrgToolCall {
  ctx: OrgContext;
  principal: OrgPrincipal;
}

export interface OrgTool<Input extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** The scope a token must hold to call this tool; null when any valid token may (service_context). */
  scope: Scope | null;
  input: Input;
  annotations: ToolAnnotations;
  run(args: z.output<Input>, call: OrgToolCall): Promise<unknown>;
}

export function defineOrgTool<Input extends z.ZodType>(tool: OrgTool<Input>): OrgTool {
  return tool as unknown as OrgTool;
}

export interface OrgToolRegistry {
  readonly tools: Tool[];
  /** The scope a tool needs: null for any token, undefined for an unknown tool (the server answers that). */
  scopeOf(name: string): Scope | null | undefined;
  call(name: string, args: Record<string, unknown> | undefined, call: OrgToolCall): Promise<CallToolResult>;
}

export function buildOrgToolRegistry(definitions: readonly OrgTool[], log: FastifyBaseLogger): OrgToolRegistry {
  const byName = new Map<string, OrgTool>();
  for (const tool of definitions) {
    if (byName.has(tool.name)) throw new Error(`duplicate MCP tool ${tool.name}`);
    byName.set(tool.name, tool);
  }
  // DESIGN 4.3: tools/list lists every tool, whatever the caller's scopes.
  const tools: Tool[] = definitions.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: inputJsonSchema(tool),
    annotations: tool.annotations,
  }));

  return {
    tools,
    scopeOf: (name) => byName.get(name)?.scope,
    async call(name, args, call) {
      const tool = byName.get(name);
      if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const parsed = tool.input.safeParse(args ?? {});
      if (!parsed.success) return errorResult(invalidArguments(parsed.error));
      try {
        return { content: [{ type: 'text', text: JSON.stringify(await tool.run(parsed.data, call)) }] };
      } catch (error) {
        if (isAppError(error)) return errorResult(error);
        log.error({ err: error, tool: name }, 'mcp tool failed');
        return errorResult(orgErrors.internal());
      }
    },
  };
}

function errorResult(error: AppError): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(error.toJSON()) }], isError: true };
}

function invalidArguments(error: z.ZodError): AppError {
  const issues = error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join('.') : issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : '(arguments)',
    message: issue.message,
  }));
  return orgErrors.invalidRequest(`invalid arguments: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, { issues });
}

function inputJsonSchema(tool: OrgTool): Tool['inputSchema'] {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  if (schema.type !== 'object') throw new Error(`MCP tool ${tool.name}: arguments must be an object schema`);
  return schema as Tool['inputSchema'];
}
