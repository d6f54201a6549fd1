/**
 * The assistant's answer without a model (DESIGN 4.5): the best items quoted and attributed, each with its
 * citation; and, when nothing in the asker's spaces matches, a plain statement that nothing is known.
 */
import type { AskResult } from './ask.js';
import type { Source } from './retrieval.js';

/** How many items the extractive answer quotes. */
const QUOTED = 3;

export const NOTHING_KNOWN =
  "Nothing in your spaces' company memory answers this yet. If you know the answer, record it with record_memory so the next person finds it.";

export function extractiveAnswer(sources: readonly Source[]): AskResult {
  if (sources.length === 0) return { answer: NOTHING_KNOWN, citations: [], answered_by: 'extractive' };
  const quoted = sources.slice(0, QUOTED);
  const lines = quoted.map(({ citation, label }, i) => {
    const by = citation.provenance.recorded_by.name;
    const on = citation.provenance.recorded_at.slice(0, 10);
    return `${i + 1}. ${citation.title} (${label}, recorded by ${by} on ${on}): "${citation.excerpt}" [${citation.id}]`;
  });
  const intro = quoted.length === 1 ? 'Company memory has one item on this:' : `Company memory has ${quoted.length} items on this, best match first:`;
  return { answer: [intro, ...lines].join('\n'), citations: quoted.map((source) => source.citation), answered_by: 'extractive' };
}
