/** Task search for the assistant's retrieval: full-text first, trigram for partial words. */
import { and, desc, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import { toIso } from '../../platform/time.js';
import { tasks } from '../schema.js';
import { taskActor, type TaskRecord } from './records.js';

export interface TaskHit {
  id: string;
  space_id: string;
  title: string;
  status: TaskRecord['status'];
  assignee_agent_id: string | null;
  created_by: z.infer<typeof taskActor>;
  created_at: string;
  updated_at: string;
  /** The matching part of the description (or its beginning, or the title when it has none). */
  excerpt: string;
  /** Higher is better; full-text matches rank above trigram ones. */
  rank: number;
}

/**
 * Tasks in `spaceIds` matching `query`, best first: PostgreSQL full-text search (`websearch_to_tsquery` over
 * the generated `search` tsvector, GIN index), then, to fill up to `limit`, trigram word similarity for short
 * or partial words the full-text parser does not match (`deplo` → "deploy").
 */
export async function searchTasks(db: Queryable, spaceIds: readonly string[], query: string, limit: number): Promise<TaskHit[]> {
  const words = query.trim();
  if (spaceIds.length === 0 || words === '' || limit < 1) return [];
  const inSpaces = inArray(tasks.spaceId, [...spaceIds]);
  const tsQuery = sql`websearch_to_tsquery('english', ${words})`;
  const fullText = await db
    .select({
      ...hitColumns,
      excerpt: sql<string>`ts_headline('english', CASE WHEN ${tasks.description} = '' THEN ${tasks.title} ELSE ${tasks.description} END, ${tsQuery}, 'StartSel="",StopSel="",MaxWords=35,MinWords=15,MaxFragments=1')`,
      rank: sql<number>`ts_rank_cd(${tasks.search}, ${tsQuery})::float8 + 1`,
    })
    .from(tasks)
    .where(and(inSpaces, sql`${tasks.search} @@ ${tsQuery}`))
    .orderBy(sql`ts_rank_cd(${tasks.search}, ${tsQuery}) DESC`, desc(tasks.updatedAt))
    .limit(limit);
  const found = new Set(fullText.map((hit) => hit.id));
  const needle = words.toLowerCase();
  const similar =
    fullText.length >= limit
      ? []
      : await db
          .select({
            ...hitColumns,
            excerpt: sql<string>`left(CASE WHEN ${tasks.description} = '' THEN ${tasks.title} ELSE ${tasks.description} END, 240)`,
            rank: sql<number>`word_similarity(${needle}, ${tasks.searchText})::float8`,
          })
          .from(tasks)
          .where(and(inSpaces, sql`${needle} <% ${tasks.searchText}`))
          .orderBy(sql`word_similarity(${needle}, ${tasks.searchText}) DESC`, desc(tasks.updatedAt))
          .limit(limit);
  return [...fullText, ...similar.filter((hit) => !found.has(hit.id))].slice(0, limit).map((hit) => ({
    id: hit.id,
    space_id: hit.spaceId,
    title: hit.title,
    status: hit.status,
    assignee_agent_id: hit.assigneeAgentId,
    created_by: { type: hit.createdByType, id: hit.createdById },
    created_at: toIso(hit.createdAt),
    updated_at: toIso(hit.updatedAt),
    excerpt: hit.excerpt,
    rank: Number(hit.rank),
  }));
}

const hitColumns = {
  id: tasks.id,
  spaceId: tasks.spaceId,
  title: tasks.title,
  status: tasks.status,
  assigneeAgentId: tasks.assigneeAgentId,
  createdByType: tasks.createdByType,
  createdById: tasks.createdById,
  createdAt: tasks.createdAt,
  updatedAt: tasks.updatedAt,
};
