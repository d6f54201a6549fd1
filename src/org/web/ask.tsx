/**
 * GET/POST /ask and GET /ask/:id: a person asks the organization's assistant from the console, as their client does
 * with `ask` — the same operation kind, answered from company memory and tasks in the person's own spaces (or the one
 * they pick), with citations that lead to the items. The question runs in this process while the page waits a few
 * seconds; an answer still coming is shown as such, and its page can be opened again. Only the asker sees it.
 */
import type { FastifyInstance } from 'fastify';
import type { VNode } from 'preact';
import { z } from 'zod';
import { askResult, type AskResult } from '../assistant/answer.js';
import { askInput, startAsk } from '../assistant/ask.js';
import { writeOrg } from '../changes.js';
import { id as fieldId } from '../fields.js';
import { listOperations, type OperationCursor, type OperationListRow } from '../operations/list.js';
import { awaitOperation, findOperation, runStartedHere, startingHere, toOperationRecord, type OperationRecord } from '../operations/operations.js';
import { listSpacesOfPerson, type Space } from '../spaces/records.js';
import { anyoneSignedIn, consolePage, consolePost, type ConsolePage, type Viewer } from './console.js';
import { FormProblems, handleForm } from './manage.js';
import { formField, type WebContext } from './respond.js';
import { Badge, Body, notFound, OlderLink, optionalField, pageHref, spaceNamer, SpaceSelect, Time, visibleSpaces } from './parts.js';
import { cursorText, operationCursor } from './operations.js';

/** How long the page waits for the answer before showing that it is still coming. */
const WAIT_SECONDS = 8;

const LABELS: Record<string, string> = { question: 'Question', space_id: 'Space' };

/** The form's fields as `ask`'s arguments, checked by the tool's own schema: no space chosen is every space. */
const askForm = z.preprocess((body) => {
  const space = formField(body, 'space_id');
  return { question: formField(body, 'question') ?? '', ...(space ? { space_id: space } : {}) };
}, askInput);

const noQuery = z.object({});
const askQuery = z.object({ space: optionalField(fieldId()), before: optionalField(operationCursor) });

/** Earlier questions listed under the form, newest first. */
const EARLIER = 10;

export function registerAskPages(app: FastifyInstance, web: WebContext): void {
  const { ctx } = web;

  async function formPage(viewer: Viewer, values: { question?: string; space_id?: string }, problems: string[] = [], before?: OperationCursor): Promise<ConsolePage> {
    // The person's own questions only, an owner's too: what others asked is on /operations for those who may see it.
    const own = { all: false, personId: viewer.person.id, spaceIds: [] };
    const [spaces, earlier] = await Promise.all([
      listSpacesOfPerson(ctx.db, viewer.person.id),
      listOperations(ctx.db, own, { kind: 'ask' }, { limit: EARLIER, before }),
    ]);
    // The link lands on the list, not the form above it, so paging back never scrolls past the form again.
    const older = earlier.next ? `${pageHref('/ask', { space: values.space_id, before: cursorText(earlier.next) })}#earlier-questions` : null;
    return {
      title: 'Ask the assistant',
      body: (
        <>
          <AskForm csrf={viewer.csrf} values={values} problems={problems} spaces={spaces} />
          <EarlierQuestions rows={earlier.rows} older={older} paged={before !== undefined} />
        </>
      ),
    };
  }

  consolePage(app, web, '/ask', askQuery, (viewer, { query }) => formPage(viewer, { space_id: query.space }, [], query.before));

  consolePost(app, web, '/ask', anyoneSignedIn, async (viewer, { body, reply }) =>
    handleForm(
      {
        schema: askForm,
        body,
        labels: LABELS,
        reply,
        again: (problems) => formPage(viewer, { question: formField(body, 'question'), space_id: formField(body, 'space_id') }, problems),
      },
      async (input) => {
        if (viewer.scope.spaceIds.length === 0 || (input.space_id !== undefined && !viewer.scope.spaceIds.includes(input.space_id))) {
          return notFound(reply, 'space', { href: '/ask', name: 'the question' });
        }
        const caller = { personId: viewer.person.id, clientId: null };
        // As a client's call: the start commits, then the question runs here while the page waits for its answer.
        const { value: operationId, started } = await startingHere(() => writeOrg(ctx, [], (tx) => startAsk(ctx, tx, input, caller)));
        await awaitOperation(ctx, operationId, viewer.person.id, WAIT_SECONDS, runStartedHere(started));
        return reply.redirect(`/ask/${operationId}`, 303);
      },
    ),
  );

  consolePage<typeof noQuery, { id: string }>(app, web, '/ask/:id', noQuery, async (viewer, { params, reply }) => {
    const row = params.id.length <= 200 ? await findOperation(ctx.db, params.id) : undefined;
    // Another person's question, or an operation that is no question, is answered as an unknown one.
    if (!row || row.personId !== viewer.person.id || row.kind !== 'ask') return notFound(reply, 'question of yours', { href: '/ask', name: 'the assistant' });
    const spaces = await visibleSpaces(ctx.db, viewer.scope);
    const question = typeof row.input.question === 'string' ? row.input.question : '—';
    return { title: 'The assistant’s answer', body: <Answer operation={toOperationRecord(row)} question={question} spaceName={spaceNamer(spaces)} /> };
  });
}

function AskForm({ csrf, values, problems, spaces }: { csrf: string; values: { question?: string; space_id?: string }; problems: string[]; spaces: Space[] }): VNode {
  return (
    <>
      <h1>Ask the assistant</h1>
      <p>The assistant answers from company memory, then tasks, in your spaces, and cites what it used so you can check it.</p>
      {spaces.length === 0 ? (
        <p role="alert">You are in no space yet, so the assistant has nothing to answer from. An owner or admin can add you to one on the People page.</p>
      ) : (
        <form method="post" action="/ask">
          <FormProblems problems={problems} />
          <input type="hidden" name="csrf" value={csrf} />
          <label for="ask-question">Question</label>
          <textarea id="ask-question" name="question" rows={3} required maxLength={2000}>
            {values.question ?? ''}
          </textarea>
          <label for="ask-space">Answer from</label>
          <SpaceSelect id="ask-space" spaces={spaces} value={values.space_id} none="All your spaces" />
          <div class="actions">
            <button type="submit">Ask</button>
          </div>
        </form>
      )}
    </>
  );
}

function EarlierQuestions({ rows, older, paged }: { rows: OperationListRow[]; older: string | null; paged: boolean }): VNode {
  return (
    <section aria-labelledby="earlier-questions">
      <h2 id="earlier-questions">{paged ? 'Older questions' : 'Your earlier questions'}</h2>
      {rows.length === 0 ? (
        <p>{paged ? 'No older questions.' : 'None yet: what you ask is kept here with its answer.'}</p>
      ) : (
        <ul>
          {rows.map((row) => (
            <li key={row.id}>
              <a href={`/ask/${row.id}`}>{row.about ?? row.id}</a> <Badge value={row.status} /> <small>
                from {row.space ? row.space.name : 'all your spaces'}, <Time value={row.createdAt} />
              </small>
            </li>
          ))}
        </ul>
      )}
      <OlderLink next={older} label="Older questions" />
    </section>
  );
}

function Answer({ operation, question, spaceName }: { operation: OperationRecord; question: string; spaceName: (id: string | null | undefined) => string }): VNode {
  const parsed = operation.status === 'succeeded' ? askResult.safeParse(operation.result) : undefined;
  return (
    <>
      <p>
        <a href="/ask">Ask another question</a>
      </p>
      <h1>The assistant’s answer</h1>
      <dl class="facts">
        <dt>Question</dt>
        <dd>{question}</dd>
        <dt>From</dt>
        <dd>{operation.space_id ? spaceName(operation.space_id) : 'all your spaces'}</dd>
        <dt>Asked</dt>
        <dd>
          <Time value={operation.created_at} />
        </dd>
      </dl>
      {parsed?.success ? (
        <AnswerText result={parsed.data} />
      ) : operation.status === 'failed' || operation.status === 'cancelled' ? (
        <p role="alert">No answer: {operation.error?.message ?? operation.status}.</p>
      ) : (
        <p role="status">
          The assistant is still working on it. <a href={`/ask/${operation.operation_id}`}>Look again</a> in a moment.
        </p>
      )}
      <p class="muted">
        <a href={`/operations/${operation.operation_id}`}>The question’s operation</a>
      </p>
    </>
  );
}

function AnswerText({ result }: { result: AskResult }): VNode {
  return (
    <>
      <Body text={result.answer} />
      <h2>Cited ({result.citations.length})</h2>
      {result.citations.length === 0 ? (
        <p>Nothing in your spaces was cited.</p>
      ) : (
        <ol>
          {result.citations.map((citation) => (
            <li key={citation.id}>
              <a href={`/${citation.kind === 'memory' ? 'memory' : 'tasks'}/${citation.id}`}>{citation.title}</a>{' '}
              <small>
                ({citation.kind}, recorded by {citation.provenance.recorded_by.name}, <Time value={citation.provenance.recorded_at} />)
              </small>
              <blockquote>{citation.excerpt}</blockquote>
            </li>
          ))}
        </ol>
      )}
      <p class="muted">{result.answered_by === 'model' ? 'Written by the organization’s model from the cited items.' : 'Quoted from the cited items (no model is configured, or it failed).'}</p>
    </>
  );
}
