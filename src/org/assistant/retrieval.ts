/**
 * What the assistant knows about a question (DESIGN 4.5): the asker's current company memory first, ranked by
 * full-text search over the question's words (any of them; more matched words rank higher) with the trigram
 * fallback, each with an excerpt and its provenance — the citations a person can check.
 */
import { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import { memoryProvenance, searchMemory, type MemoryItem } from '../memory.js';

/** How many memory items an answer draws on. */
export const MEMORY_SOURCES = 5;
/** The longest excerpt quoted from one item. */
const EXCERPT_CHARS = 240;

/** DESIGN 4.3 "Shapes": a citation, with the provenance of what it cites. */
export const citationRecord = z.object({
  kind: z.enum(['memory', 'task']),
  id: z.string(),
  title: z.string(),
  excerpt: z.string(),
  provenance: memoryProvenance,
});
export type Citation = z.infer<typeof citationRecord>;

/** A retrieved item: its citation, and the whole text a model may read. */
export interface Source {
  citation: Citation;
  /** `fact`, `decision`, `instruction` or `task`. */
  label: string;
  text: string;
}

export async function retrieve(db: Queryable, question: string, spaceIds: readonly string[]): Promise<Source[]> {
  if (spaceIds.length === 0) return [];
  const page = await searchMemory(db, { query: question.slice(0, 500), limit: MEMORY_SOURCES }, { spaceIds }, { match: 'any' });
  return page.items.map((item) => memorySource(item, question));
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
