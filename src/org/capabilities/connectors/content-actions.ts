/**
 * The content actions a `content` connector can run (DESIGN 4.2): each names a content MCP tool, takes
 * that tool's arguments, and is sent to the content REST API (interface C) as the request the tool's own
 * REST twin answers. The tools, their schemas and those requests are the content service's contract
 * (content/contract.ts), the one content module the organization reads.
 */
import { z } from 'zod';
import { CONTENT_TOOL_INPUTS, CONTENT_WRITE_ACTIONS, type ContentToolName } from '../../../content/contract.js';

/** Only the writes a capability makes sense for are offered; reads need no gate. */
export const CONTENT_ACTIONS: string[] = CONTENT_WRITE_ACTIONS;

/** The JSON Schema of the content tool's arguments: the capability's input schema unless the file gives one. */
export function contentActionSchema(action: string): Record<string, unknown> {
  const input = Object.hasOwn(CONTENT_TOOL_INPUTS, action) ? CONTENT_TOOL_INPUTS[action as ContentToolName] : undefined;
  if (!input) throw new Error(`unknown content action ${action}`);
  const { $schema: _schema, ...schema } = z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
  return schema;
}
