import { z } from 'zod';
import { citationRecord } from './retrieval.js';

/** The result of a succeeded `ask` operation. */
export const askResult = z.object({
  answer: z.string(),
  citations: z.array(citationRecord),
  /** `model` when the configured model answered, `extractive` when the items were quoted instead. */
  answered_by: z.enum(['extractive', 'model']),
});
export type AskResult = z.infer<typeof askResult>;
