/**
 * The content actions a `content` connector can run (DESIGN 4.2): each names a content MCP tool, takes
 * that tool's arguments, and is sent to the content REST API (interface C) as the request the tool's own
 * REST twin answers. Only the writes a capability makes sense for are listed; reads need no gate.
 */
import { z } from 'zod';
import { contentTools } from '../../../content/mcp/server.js';

export interface ContentRequest {
  method: 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body: Record<string, unknown>;
}

type Args = Record<string, unknown>;
const segment = (value: unknown) => encodeURIComponent(String(value));
const without = (args: Args, key: string) => Object.fromEntries(Object.entries(args).filter(([name]) => name !== key));

const ACTIONS: Record<string, (args: Args) => ContentRequest> = {
  create_blog_post: (args) => ({ method: 'POST', path: '/blog', body: args }),
  update_blog_post: (args) => ({ method: 'PATCH', path: `/blog/${segment(args.slug)}`, body: without(args, 'slug') }),
  publish_blog_post: (args) => ({ method: 'POST', path: `/blog/${segment(args.slug)}/publish`, body: {} }),
  delete_blog_post: (args) => ({ method: 'DELETE', path: `/blog/${segment(args.slug)}`, body: {} }),
  create_changelog_entry: (args) => ({ method: 'POST', path: '/changelog', body: args }),
  delete_changelog_entry: (args) => ({ method: 'DELETE', path: `/changelog/${segment(args.identifier)}`, body: {} }),
  create_roadmap_item: (args) => ({ method: 'POST', path: '/roadmap', body: args }),
  update_roadmap_item: (args) => ({ method: 'PATCH', path: `/roadmap/${segment(args.slug)}`, body: without(args, 'slug') }),
  delete_roadmap_item: (args) => ({ method: 'DELETE', path: `/roadmap/${segment(args.slug)}`, body: {} }),
};

export const CONTENT_ACTIONS = Object.keys(ACTIONS);

export function contentRequest(action: string, args: Args): ContentRequest {
  const build = ACTIONS[action];
  if (!build) throw new Error(`unknown content action ${action}`);
  return build(args);
}

/** The JSON Schema of the content tool's arguments: the capability's input schema unless the file gives one. */
export function contentActionSchema(action: string): Record<string, unknown> {
  const tool = contentTools.find((candidate) => candidate.name === action);
  if (!tool) throw new Error(`unknown content action ${action}`);
  const { $schema: _schema, ...schema } = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
  return schema;
}
