/** Records memory: a new item, or a new version of a current one (records.ts says how versions work). */
import { and, eq, type SQL } from 'drizzle-orm';
import type { Queryable } from '../../platform/database.js';
import { orderedNow } from '../../platform/time.js';
import type { Changed } from '../../auth/index.js';
import { recordActivity } from '../activity/records.js';
import { ORG_MEMORY } from '../changes.js';
import { orgErrors } from '../errors.js';
import { newId } from '../ids.js';
import { agents, memoryItems, people } from '../schema.js';
import { itemColumns, type MemoryRecorder, type RecordMemoryInput, type MemoryCaller, type MemoryItem, toMemoryItem } from './records.js';

/**
 * Records a new item, or a new version of a current one (`supersedes`), with its `memory.written` activity
 * entry, reported through `changed` for the enclosing write to announce (search results are kept in memory:
 * read-cache.ts). Run it in one transaction (the tool registry's): the superseded item is claimed first with a conditional UPDATE, so of two versions racing to
 * supersede one item exactly one wins and the other is refused with `invalid_state`, writing nothing.
 */
export async function recordMemory(db: Queryable, input: RecordMemoryInput, recorder: MemoryRecorder, caller: MemoryCaller, changed: Changed): Promise<MemoryItem> {
  if (!caller.spaceIds.includes(input.space_id)) throw orgErrors.notFound('space');
  if (input.valid_from && input.valid_until && Date.parse(input.valid_until) <= Date.parse(input.valid_from)) {
    throw orgErrors.invalidArgument('valid_until', 'must be later than valid_from');
  }
  const id = newId('mem');
  let lineageId = id;
  let recordedAt: SQL | string = orderedNow();
  if (input.supersedes) {
    const replaced = await claimForSuperseding(db, input.supersedes, id, input.space_id, caller);
    lineageId = replaced.lineageId;
    // The new version becomes current at the very instant the old one stopped being current.
    recordedAt = replaced.supersededAt;
  }
  const [row] = await db
    .insert(memoryItems)
    .values({
      id,
      kind: input.kind,
      title: input.title,
      body: input.body,
      tags: [...new Set(input.tags ?? [])],
      spaceId: input.space_id,
      validFrom: input.valid_from ?? null,
      validUntil: input.valid_until ?? null,
      lineageId,
      supersedes: input.supersedes ?? null,
      recordedByType: recorder.type,
      recordedById: recorder.type === 'person' ? recorder.personId : recorder.agentId,
      recordedByName: await recorderName(db, recorder),
      onBehalfOfPersonId: recorder.type === 'agent' ? recorder.onBehalfOfPersonId : null,
      clientId: recorder.clientId ?? null,
      operationId: recorder.type === 'agent' ? recorder.operationId : null,
      recordedAt,
    })
    .returning(itemColumns);
  await recordActivity(db, {
    kind: 'memory.written',
    summary: `${input.supersedes ? 'recorded a new version of' : 'recorded'} the ${input.kind} “${input.title}”`,
    spaceId: input.space_id,
    personId: recorder.type === 'person' ? recorder.personId : recorder.onBehalfOfPersonId,
    clientId: recorder.clientId ?? null,
    agentId: recorder.type === 'agent' ? recorder.agentId : null,
    operationId: recorder.type === 'agent' ? recorder.operationId : null,
    subject: id,
    details: { memory_kind: input.kind, title: input.title, ...(input.supersedes ? { supersedes: input.supersedes } : {}) },
  });
  changed({ kind: ORG_MEMORY });
  return toMemoryItem(row);
}

/** Marks `supersededId` superseded by `byId`, or says exactly why it cannot be. */
async function claimForSuperseding(db: Queryable, supersededId: string, byId: string, spaceId: string, caller: MemoryCaller) {
  const [claimed] = await db
    .update(memoryItems)
    .set({ status: 'superseded', supersededBy: byId, supersededAt: orderedNow() })
    .where(and(eq(memoryItems.id, supersededId), eq(memoryItems.spaceId, spaceId), eq(memoryItems.status, 'current')))
    .returning({ lineageId: memoryItems.lineageId, supersededAt: memoryItems.supersededAt });
  if (claimed) return { lineageId: claimed.lineageId, supersededAt: claimed.supersededAt! };

  const [target] = await db
    .select({ spaceId: memoryItems.spaceId, status: memoryItems.status, supersededBy: memoryItems.supersededBy })
    .from(memoryItems)
    .where(eq(memoryItems.id, supersededId));
  if (!target || !caller.spaceIds.includes(target.spaceId)) throw orgErrors.notFound('memory item');
  if (target.spaceId !== spaceId) throw orgErrors.invalidArgument('supersedes', 'the item is in another space; a new version stays in its space');
  throw orgErrors.invalidState(
    `the memory item is already superseded by ${target.supersededBy}, so it cannot be superseded again: supersede its current version`,
    { status: target.status, superseded_by: target.supersededBy },
  );
}

async function recorderName(db: Queryable, recorder: MemoryRecorder): Promise<string> {
  const [row] =
    recorder.type === 'person'
      ? await db.select({ name: people.name }).from(people).where(eq(people.id, recorder.personId))
      : await db.select({ name: agents.name }).from(agents).where(eq(agents.id, recorder.agentId));
  if (!row) throw new Error(`memory recorder ${recorder.type} does not exist`);
  return row.name;
}
