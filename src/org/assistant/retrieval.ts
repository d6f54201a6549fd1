/**
 * What the assistant knows about a question (DESIGN 4.5): the asker's current company memory first, then
 * their tasks, each found by full-text search over the question's words (any of them; more matched words
 * rank higher) with the trigram fallback, each with an excerpt and its provenance — the citations a person
 * can check. A task's provenance is who created it and when.
 */
import { inArray } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import { memoryProvenance, searchMemory, type MemoryItem } from '../memory/search.js';
import { agents, people } from '../schema.js';
import { searchTasks, type TaskHit } from '../tasks/records.js';

/** How many memory items and tasks an answer draws on. */
export const MEMORY_SOURCES = 5;
export const TASK_SOURCES = 3;
/** The longest excerpt quoted from one item. */
const EXCERPT_CHARS = 240;

/** DESIGN 4.3 "Shapes": a citation, with the provenance of what it cites. */
export const citationRecord = z.object({
  kind: z.enum(['memory', 'task']),
  id: z.string(),
  title: z.string(),
  excerpt: z.string(),
  /** A memory item's provenance; for a task, who created it (`recorded_by`) and when (`recorded_at`). */
  provenance: memoryProvenance,
});
export type Citation = z.infer<typeof citationRecord>;

/** A retrieved item: its citation, and the whole text a model may read. */
export interface Source {
  citation: Citation;
  /** What the item is: `fact`, `decision`, `instruction`, or `task, <status>`. */
  label: string;
  text: string;
}

export async function retrieve(db: Queryable, question: string, spaceIds: readonly string[]): Promise<Source[]> {
  if (spaceIds.length === 0) return [];
  const [page, hits] = await Promise.all([
    searchMemory(db, { query: question.slice(0, 500), limit: MEMORY_SOURCES }, { spaceIds }, { match: 'any' }),
    searchTasks(db, spaceIds, anyOfTheWords(question), TASK_SOURCES),
  ]);
  const names = await creatorNames(db, hits);
  return [...page.items.map((item) => memorySource(item, question)), ...hits.map((hit) => taskSource(hit, names))];
}

/** Web-search syntax for "any of these words" (`websearch_to_tsquery` drops the stop words among them). */
function anyOfTheWords(question: string): string {
  const words = question.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word && word !== 'or');
  return [...new Set(words)].slice(0, 30).join(' or ');
}

function taskSource(hit: TaskHit, names: Map<string, string>): Source {
  return {
    citation: {
      kind: 'task',
      id: hit.id,
      title: hit.title,
      excerpt: hit.excerpt,
      provenance: {
        recorded_by: { type: hit.created_by.type, id: hit.created_by.id, name: names.get(hit.created_by.id) ?? hit.created_by.id },
        recorded_at: hit.created_at,
      },
    },
    label: `task, ${hit.status.replace('_', ' ')}`,
    text: hit.excerpt,
  };
}

/** The names of the people and agents who created the tasks, as provenance shows them. */
async function creatorNames(db: Queryable, hits: readonly TaskHit[]): Promise<Map<string, string>> {
  const ids = (type: 'person' | 'agent') => [...new Set(hits.filter((hit) => hit.created_by.type === type).map((hit) => hit.created_by.id))];
  const [persons, agentIds] = [ids('person'), ids('agent')];
  const rows = [
    ...(persons.length ? await db.select({ id: people.id, name: people.name }).from(people).where(inArray(people.id, persons)) : []),
    ...(agentIds.length ? await db.select({ id: agents.id, name: agents.name }).from(agents).where(inArray(agents.id, agentIds)) : []),
  ];
  return new Map(rows.map((row) => [row.id, row.name]));
}

function memorySource(item: MemoryItem, question: string): Source {
  return {
    citation: { kind: 'memory', id: item.id, title: item.title, excerpt: excerptOf(item.body, question), provenance: item.provenance },
    label: item.kind,
    text: item.body,
  };
}

/**
 * The sentence of `text` that shares the most words with the question (a word counts when its first five
 * letters appear, which catches most English inflections), shortened at a word boundary.
 */
export function excerptOf(text: string, question: string): string {
  const stems = [...new Set(question.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word.length >= 3))].map((word) => word.slice(0, 5));
  const sentences = text.split(/(?<=[.!?])\s+|\n+/).map((sentence) => sentence.trim()).filter(Boolean);
  let best = sentences[0] ?? text;
  let bestScore = 0;
  for (const sentence of sentences) {
    const lower = sentence.toLowerCase();
    const score = stems.filter((stem) => lower.includes(stem)).length;
    if (score > bestScore) [best, bestScore] = [sentence, score];
  }
  if (best.length <= EXCERPT_CHARS) return best;
  const cut = best.slice(0, EXCERPT_CHARS);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), EXCERPT_CHARS / 2)).trimEnd()}…`;
}
