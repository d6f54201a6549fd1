/**
 * The five roadmap tools of spec 4.3, over content/roadmap/ (spec 3.3). MCP callers manage the content,
 * so they see non-public items too (DESIGN 3).
 */
import { getItem, listItems } from '../roadmap/queries.js';
import { createItem, deleteItem, updateItem } from '../roadmap/writes.js';
import { DELETE, READ, WRITE, defineTool } from './tools.js';

const everything = { includeHidden: true };

export const roadmapTools = [
  defineTool({
    name: 'list_roadmap_items',
    description:
      'List roadmap items in priority order (critical, high, medium, low; ties by votes, then most recently updated), ' +
      'optionally filtered by status and category. Returns {items, next_cursor, total, by_status}, where by_status ' +
      'counts the items of each status matching the other filters.',
    annotations: READ,
    run: (args, { ctx }) => listItems(ctx, { ...args, sort: 'priority' }, everything),
  }),

  defineTool({
    name: 'get_roadmap_item',
    description: 'Get one roadmap item, public or not, with its description, status, priority, quarter and votes.',
    annotations: READ,
    run: ({ slug }, { ctx }) => getItem(ctx, slug, everything),
  }),

  defineTool({
    name: 'create_roadmap_item',
    description:
      'Create a roadmap item. status defaults to planned and priority to medium; quarter has the form "Q<n> <year>", ' +
      'e.g. "Q3 2026". The slug is derived from the title.',
    annotations: WRITE,
    run: (args, { ctx, actor }) => createItem(ctx, args, actor),
  }),

  defineTool({
    name: 'update_roadmap_item',
    description:
      'Update any of title, description, summary, status, priority and quarter of a roadmap item. Any status may be ' +
      'set; entering shipped records shipped_at and leaving it clears it. null clears description, summary or quarter.',
    annotations: { ...WRITE, idempotentHint: true },
    run: ({ slug, ...changes }, { ctx, actor }) => updateItem(ctx, slug, changes, actor),
  }),

  defineTool({
    name: 'delete_roadmap_item',
    description:
      'Permanently delete a roadmap item and all its votes. A shipped item cannot be deleted (invalid_state). This may ' +
      'remove public content and is irreversible, so a person should confirm before you call this.',
    annotations: DELETE,
    run: ({ slug }, { ctx, actor }) => deleteItem(ctx, slug, actor),
  }),
];
