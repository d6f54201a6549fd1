/**
 * The assistant's answer without a model (DESIGN 4.5): the best memory items, then the best tasks, quoted and
 * attributed, each with its citation; and, when nothing in the asker's spaces matches, a plain statement
 * that nothing is known.
 */
import type { AskResult } from './answer.js';
import type { Source } from './retrieval.js';

/** How many memory items and tasks the extractive answer quotes. */
const QUOTED = { memory: 3, task: 2 } as const;

export const NOTHING_KNOWN =
  "Nothing in your spaces' company memory or tasks answers this yet. If you know the answer, record it with record_memory so the next person finds it.";

export function extractiveAnswer(sources: readonly Source[]): AskResult {
  if (sources.length === 0) return { answer: NOTHING_KNOWN, citations: [], answered_by: 'extractive' };
  const memory = sources.filter((source) => source.citation.kind === 'memory').slice(0, QUOTED.memory);
  const tasks = sources.filter((source) => source.citation.kind === 'task').slice(0, QUOTED.task);
  const lines = [
    ...section(memory, 'Company memory says, best match first:', 'recorded'),
    ...section(tasks, memory.length ? 'Related tasks:' : 'Nothing in company memory answers this; related tasks:', 'created'),
  ];
  return { answer: lines.join('\n'), citations: [...memory, ...tasks].map((source) => source.citation), answered_by: 'extractive' };
}

function section(sources: readonly Source[], heading: string, verb: string): string[] {
  if (sources.length === 0) return [];
  return [
    heading,
    ...sources.map(({ citation, label }, i) => {
      const { recorded_by, recorded_at } = citation.provenance;
      return `${i + 1}. ${citation.title} (${label}, ${verb} by ${recorded_by.name} on ${recorded_at.slice(0, 10)}): "${citation.excerpt}" [${citation.id}]`;
    }),
  ];
}
