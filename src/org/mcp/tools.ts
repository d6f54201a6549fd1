/**
 * How an org MCP tool is defined (DESIGN 4.3): a strict zod schema for its arguments, the OAuth scope it
 * needs (null: any token), and a `run` over the domain layer. The tool's scope is data on the tool, so
 * the one general scope check (scope-check.ts) covers every tool later issues add. The registry, argument
 * checking and result shapes are the platform's (platform/mcp/tools.ts), shared with the content server.
 */
import type { z } from 'zod';
import type { Scope } from '../../auth/index.js';
import type { McpTool, McpToolRegistry } from '../../platform/mcp/tools.js';
import type { OrgContext } from '../context.js';

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

export interface OrgTool<Input extends z.ZodType = z.ZodType> extends McpTool<OrgToolCall, Input> {
  /** The scope a token must hold to call this tool; null when any valid token may (service_context). */
  scope: Scope | null;
}

export function defineOrgTool<Input extends z.ZodType>(tool: OrgTool<Input>): OrgTool {
  return tool as unknown as OrgTool;
}

export type OrgToolRegistry = McpToolRegistry<OrgToolCall, OrgTool>;
