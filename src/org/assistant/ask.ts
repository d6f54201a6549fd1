/**
 * `ask` (DESIGN 4.3, 4.5): a question to the built-in assistant, answered as an operation of kind `ask`
 * from the asker's memory and tasks — in the one space given as `space_id`, or in all of theirs — with citations.
 *
 * The runner reads the asker's spaces when it runs (not when the question was asked), so a person removed
 * from a space meanwhile is not answered from it. It writes nothing but the operation's result, so running
 * it again after a crash is harmless.
 */
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import type { Queryable } from '../../platform/database.js';
import { ASSISTANT_KEY } from '../agents/records.js';
import type { OrgContext } from '../context.js';
import { id, text } from '../fields.js';
import { defineOperationKind } from '../operations/kinds.js';
import { agents } from '../schema.js';
import { listSpaceIdsOfPerson } from '../spaces/records.js';
import { extractiveAnswer } from './extractive.js';
import { modelAnswer, modelConfigOf } from './model.js';
import { retrieve, type Source } from './retrieval.js';
import { type AskResult } from './answer.js';

export const askInput = z
  .object({
    question: text().trim().min(1).max(2_000),
    space_id: id().optional().describe('Answer only from this space; default: every space you belong to'),
  })
  .strict();
export type AskInput = z.output<typeof askInput>;

/** `ask` operations: the assistant answers the question from the person's spaces (or the one asked for). */
export const askKind = defineOperationKind({
  kind: 'ask',
  input: z.object({ question: z.string() }),
  async run(ctx, operation) {
    const { question } = operation.input;
    const spaceIds = await listSpaceIdsOfPerson(ctx.db, operation.personId);
    const sources = await retrieve(ctx.db, question, operation.spaceId ? spaceIds.filter((id) => id === operation.spaceId) : spaceIds);
    return { status: 'succeeded', result: await answer(ctx, question, sources) };
  },
});

/** Starts the question's operation in `db` (the idempotency key's transaction); returns its id. */
export async function startAsk(ctx: OrgContext, db: Queryable, input: AskInput, caller: { personId: string; clientId: string | null }): Promise<string> {
  const [assistant] = await db.select({ id: agents.id }).from(agents).where(eq(agents.key, ASSISTANT_KEY));
  return askKind.start(ctx, db, {
    personId: caller.personId,
    clientId: caller.clientId,
    agentId: assistant?.id ?? null,
    spaceId: input.space_id ?? null,
    input: { question: input.question },
  });
}

async function answer(ctx: OrgContext, question: string, sources: Source[]): Promise<AskResult> {
  const model = modelConfigOf(ctx.config.llm);
  if (!model || sources.length === 0) return extractiveAnswer(sources);
  try {
    return await modelAnswer(model, question, sources);
  } catch (error) {
    ctx.log.warn({ err: error }, 'the assistant model failed; answering extractively');
    return extractiveAnswer(sources);
  }
}
