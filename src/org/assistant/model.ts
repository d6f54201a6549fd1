/**
 * The assistant's answer from a model (DESIGN 4.5): an OpenAI-compatible chat completions endpoint
 * (`LLM_BASE_URL`, `LLM_MODEL`, `LLM_API_KEY`) through the official `openai` client, grounded on the
 * retrieved items and told to cite them by id. Only citations of items it was given are kept; an invented
 * one is dropped from the citations and from the answer's text. Errors and timeouts are thrown: the caller
 * answers extractively instead.
 */
import type { OrgConfig } from '../../config.js';
import type { AskResult } from './answer.js';
import type { Source } from './retrieval.js';

export const DEFAULT_MODEL_TIMEOUT_MS = 10_000;
/** The most of one item's text put before the model. */
const SOURCE_CHARS = 2_000;

export type ModelConfig = Required<Pick<OrgConfig['llm'], 'baseUrl' | 'model'>> & OrgConfig['llm'];

export function modelConfigOf(llm: OrgConfig['llm']): ModelConfig | null {
  return llm.baseUrl && llm.model ? { ...llm, baseUrl: llm.baseUrl, model: llm.model } : null;
}

const INSTRUCTIONS = [
  "You are the organization's assistant. Answer the question using only the numbered items below, taken from the",
  "organization's company memory and tasks. Cite every item you rely on by its id in square brackets, for example",
  '[mem_abc123]. Never cite an id that is not listed. If the items do not answer the question, say plainly that',
  'nothing known answers it. Be brief.',
].join(' ');

export async function modelAnswer(config: ModelConfig, question: string, sources: readonly Source[]): Promise<AskResult> {
  // Loaded on the first question rather than at start: the client is some 2 MB of heap an idle server need not hold.
  const { default: OpenAI } = await import('openai');
  // No retries: the timeout bounds the whole wait, after which the extractive answer is given.
  const client = new OpenAI({
    baseURL: config.baseUrl,
    apiKey: config.apiKey ?? 'not-needed',
    timeout: config.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS,
    maxRetries: 0,
  });
  const completion = await client.chat.completions.create({
    model: config.model,
    temperature: 0,
    messages: [
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: `Question: ${question}\n\nItems:\n\n${sources.map(describeSource).join('\n\n')}` },
    ],
  });
  const text = completion.choices[0]?.message?.content?.trim();
  if (!text) throw new Error('the model answered nothing');
  return keepGivenCitations(text, sources);
}

function describeSource({ citation, label, text }: Source, index: number): string {
  const { recorded_by, recorded_at } = citation.provenance;
  const body = text.length > SOURCE_CHARS ? `${text.slice(0, SOURCE_CHARS)}…` : text;
  return `${index + 1}. [${citation.id}] ${label}: ${citation.title} (recorded by ${recorded_by.name} on ${recorded_at.slice(0, 10)})\n${body}`;
}

/** What looks like a cited id: `prefix_` and an opaque tail (ids.ts), as a model would copy or invent one. */
const ID_TOKEN = /^[a-z]{1,12}_[A-Za-z0-9_-]{3,}$/;

/**
 * The citations of the answer, in order of first mention, limited to the items given; bracketed ids that
 * point elsewhere are removed from the text, so the answer never refers to something a person cannot check.
 */
export function keepGivenCitations(text: string, sources: readonly Source[]): AskResult {
  const given = new Map(sources.map((source) => [source.citation.id, source.citation]));
  const cited: string[] = [];
  const answer = text
    .replace(/\[([^\]\n]{1,400})\]/g, (whole, inside: string) => {
      const tokens = inside.split(/[\s,;]+/).filter(Boolean);
      if (tokens.length === 0 || !tokens.every((token) => ID_TOKEN.test(token))) return whole;
      const kept = tokens.filter((token) => given.has(token));
      for (const id of kept) if (!cited.includes(id)) cited.push(id);
      return kept.length ? `[${kept.join(', ')}]` : '';
    })
    .replace(/[ \t]+([.,;:!?])/g, '$1')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
  return { answer, citations: cited.map((id) => given.get(id)!), answered_by: 'model' };
}
