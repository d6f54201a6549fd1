/**
 * How a content MCP tool is defined (DESIGN sections 3 and 5): its name, whose arguments' schema is the
 * contract's (contract.ts), plus a `run` that calls the domain layer. The registry, argument checking and result shapes are the platform's
 * (platform/mcp/tools.ts), shared with the org server.
 */
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import { buildMcpToolRegistry, type McpTool, type McpToolRegistry } from '../../platform/mcp/tools.js';
import type { Actor } from '../actor.js';
import type { ContentContext } from '../context.js';
import { CONTENT_TOOL_INPUTS, type ContentToolInputs, type ContentToolName } from '../contract.js';

/** What a tool call may use besides its arguments. */
export interface ToolCall {
  ctx: ContentContext;
  /** Writes are recorded as the agent whose client opened the session (DESIGN 3). */
  actor: Actor;
}

export type ContentTool<Input extends z.ZodType = z.ZodType> = McpTool<ToolCall, Input>;

/**
 * A tool with the contract's schema for its name, so the MCP server and what the organization's connector
 * reads of a tool cannot disagree. Keeps each tool's `run` typed by its own schema while the registry holds
 * them side by side.
 */
export function defineTool<Name extends ContentToolName>(
  tool: Omit<ContentTool<ContentToolInputs[Name]>, 'input'> & { name: Name },
): ContentTool {
  return { ...tool, input: CONTENT_TOOL_INPUTS[tool.name] } as unknown as ContentTool;
}

/** Annotation sets (MCP 2025-03-26 ToolAnnotations). Our tools only touch this service's own content. */
export const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
export const DELETE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

export type ToolRegistry = McpToolRegistry<ToolCall, ContentTool>;

export function buildToolRegistry(definitions: ContentTool[], log: FastifyBaseLogger): ToolRegistry {
  return buildMcpToolRegistry(definitions, log);
}
