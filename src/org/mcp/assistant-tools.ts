/** ask (DESIGN 4.3, 4.5): a question to the organization's assistant, answered from company memory and tasks with citations. */
import { askInput, startAsk } from '../assistant/ask.js';
import { defineOrgTool } from './tools.js';

export const assistantTools = [
  defineOrgTool({
    name: 'ask',
    description:
      "Asks the organization's assistant a question. It answers from company memory, then tasks, in your spaces (or only space_id), " +
      'as an operation whose result is {answer, citations[]}: each citation names the item (kind, id, title), quotes it ' +
      '(excerpt) and says who recorded it and when (provenance), so the answer can be checked. When nothing is known it ' +
      'says so. Waits up to wait_seconds for the answer; poll get_operation if it is not finished.',
    scope: 'service:ask',
    needsSpace: true,
    effect: 'work',
    input: askInput,
    annotations: { destructiveHint: false, openWorldHint: false },
    run: (input, { ctx, db, principal }) => startAsk(ctx, db, input, principal),
  }),
];
