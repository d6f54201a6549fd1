/** record_memory, search_memory, get_memory (DESIGN 4.3): company memory with provenance, history and time. */
import { getMemory, searchMemory } from '../memory/search.js';
import { cachedOrgRead } from '../read-cache.js';
import { defineOrgTool } from './tools.js';
import { memoryPage, searchMemoryInput, recordMemoryInput, getMemoryInput, memoryItemRecord, memoryItemWithHistory } from '../memory/records.js';
import { recordMemory } from '../memory/write.js';

export const memoryTools = [
  defineOrgTool({
    name: 'record_memory',
    description:
      "Records a fact, decision or standing instruction in a space's company memory, with you and this client as its " +
      'provenance. To change an item, record its new version with supersedes = the current item id: the old version ' +
      'keeps its history and leaves search. valid_from / valid_until bound when the item holds. Send an idempotency_key ' +
      'to retry safely.',
    scope: 'memory:write',
    needsSpace: true,
    effect: 'write',
    input: recordMemoryInput,
    output: memoryItemRecord,
    annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: (input, { db, principal, spaceIds, changed }) =>
      recordMemory(db, input, { type: 'person', personId: principal.personId, clientId: principal.clientId }, { spaceIds }, changed),
  }),
  defineOrgTool({
    name: 'search_memory',
    description:
      "Searches company memory in your spaces, best matches first: current items valid now, unless as_of (what was " +
      'current and valid at that instant) or include_superseded (older versions too). Filter by kind, tags or space_id. ' +
      'Partial and short words are found too. Page with next_cursor.',
    scope: 'memory:read',
    needsSpace: true,
    effect: 'read',
    input: searchMemoryInput,
    output: memoryPage,
    annotations: { idempotentHint: true, openWorldHint: false },
    // Kept in memory by the readable spaces and the arguments until any memory write (read-cache.ts), and so is
    // the first tier's boundary, which every other search of those spaces shares meanwhile.
    run: (input, { ctx, spaceIds }) =>
      cachedOrgRead(ctx, ctx.db, 'memory', 'searchMemory', { ...input, readable_spaces: [...spaceIds].sort() }, () =>
        searchMemory(ctx.db, input, { spaceIds }, { cacheBoundary: (key, read) => cachedOrgRead(ctx, ctx.db, 'memory', 'searchBoundary', key, read) }),
      ),
  }),
  defineOrgTool({
    name: 'get_memory',
    description: 'Reads one memory item with its provenance and history: every version of it, newest first.',
    scope: 'memory:read',
    needsSpace: true,
    effect: 'read',
    input: getMemoryInput,
    output: memoryItemWithHistory,
    annotations: { idempotentHint: true, openWorldHint: false },
    run: ({ memory_id }, { ctx, spaceIds }) => getMemory(ctx.db, memory_id, { spaceIds }),
  }),
];
