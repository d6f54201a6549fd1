/** search_content (spec 4.3), over content/search.ts. */
import { searchContent } from '../search.js';
import { READ, defineTool } from './tools.js';

export const searchTools = [
  defineTool({
    name: 'search_content',
    description:
      'Search blog posts, changelog entries and roadmap items by a case-insensitive substring of their title, ' +
      'description or summary, and body. Results are grouped by type as {results: {blog, changelog, roadmap}}, each ' +
      'a list of {slug, title, description, type, status}; limit applies per type. Drafts and non-public items are included.',
    annotations: READ,
    // MCP callers hold the secret and manage the content, so hidden content is searched too (DESIGN 3).
    run: (args, { ctx }) => searchContent(ctx, args, { includeHidden: true }),
  }),
];
