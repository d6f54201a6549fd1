/**
 * GET /inbox/decisions/:id (issue 16 item 10, issue 20 item 5): the page an email links to, and where Approve and
 * Deny land. A person not signed in is sent to sign in and brought back here. It shows what the person weighs
 * (capability, agent, who asked, risk, reasons, arguments, expiry) with Approve and Deny while the decision is
 * pending, then the decision as resolved and what became of its action: the operation's status, then its result or
 * error (bounded). While the action still runs, the page refreshes itself every two seconds (a meta refresh: no
 * JavaScript needed). A decision that needs several people's approval (DESIGN 4.8) shows how many approved and
 * who, and tells the person who approved that it waits for another. A person who may see the decision's operation
 * but not decide it is sent to the operation's page, which tells the decision.
 */
import type { FastifyInstance } from 'fastify';
import { findOperation, toOperationRecord, type OperationRecord } from '../operations/operations.js';
import { issueCsrfToken } from './csrf.js';
import { approvalRefusal, DecisionFacts, ResolveForm } from './inbox.js';
import { describeResolver, formatTime } from './format.js';
import { sendPersonalPage, type WebContext } from './respond.js';
import { signInUrl } from './return-to.js';
import { currentSession } from './sessions.js';
import { decisionContexts, decisionsFor, findDecisionRecord, type DecisionContext, type DecisionRecord } from '../decisions/records.js';
import { findOperationInScope } from '../operations/list.js';
import { scopeOf } from './console.js';

/** The most of a result the page shows; the rest is for `get_operation`. */
const SHOWN_RESULT_CHARS = 4000;
const RUNNING = ['queued', 'running'];

export function registerOutcomePage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;

  app.get('/inbox/decisions/:id', async (request, reply) => {
    const { id } = request.params as { id: string };
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl(`/inbox/decisions/${encodeURIComponent(id)}`), 303);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    const possible = id.length <= 200;
    const [decision] = possible ? await decisionsFor(ctx.db, { person: session.person, clientId: null }, { id }) : [];
    if (!decision) {
      // Not theirs to decide, but perhaps theirs to see (an activity entry links here): its operation's page tells it.
      const seen = possible ? await findDecisionRecord(ctx.db, id) : undefined;
      if (seen && (await findOperationInScope(ctx.db, await scopeOf(web, session.person), seen.operation_id))) {
        return reply.redirect(`/operations/${encodeURIComponent(seen.operation_id)}#decision`, 303);
      }
      reply.code(404);
      return sendPersonalPage(
        web,
        reply,
        session,
        csrf,
        'Decision not found',
        <>
          <h1>Decision not found</h1>
          <p>
            No such decision is yours to see. <a href="/inbox">Back to the inbox</a>
          </p>
        </>,
        '/inbox',
      );
    }
    const row = await findOperation(ctx.db, decision.operation_id);
    const operation = row && toOperationRecord(row);
    const running = !!operation && RUNNING.includes(operation.status);
    const refusal = approvalRefusal(decision, session.person.id, row?.personId);
    const context = (await decisionContexts(ctx.db, [decision.id])).get(decision.id);
    const body = <Outcome decision={decision} context={context} operation={operation || undefined} running={running} csrf={csrf} refusal={refusal} />;
    if (running) reply.header('refresh', '2');
    return sendPersonalPage(web, reply, session, csrf, `Decision: ${decision.action.capability_name}`, body, '/inbox');
  });
}

interface OutcomeProps {
  decision: DecisionRecord;
  context?: DecisionContext;
  operation?: OperationRecord;
  running: boolean;
  csrf: string;
  refusal?: string;
}

function Outcome({ decision, context, operation, running, csrf, refusal }: OutcomeProps) {
  const result = operation?.result === undefined ? undefined : JSON.stringify(operation.result, null, 2);
  return (
    <>
      <h1>
        {decision.action.capability_name}: {decision.status}
      </h1>
      <dl class="facts">
        <dt>Decision</dt>
        <dd>
          <span class={`badge ${decision.status}`}>{decision.status}</span>
          {decision.resolved_by ? ` by ${describeResolver(decision.resolved_by)}` : null}
          {decision.resolved_at ? `, ${formatTime(decision.resolved_at)}` : null}
        </dd>
        <DecisionFacts decision={decision} context={context} />
        <dt>Operation</dt>
        <dd>
          <code>{decision.operation_id}</code>
        </dd>
        <dt>Outcome</dt>
        <dd>
          {/* A dd may not carry a role (ARIA in HTML): the live status is a span inside it. */}
          <span role="status">
            {operation ? operation.status : 'unknown'}
            {running ? ' — the action is running; this page refreshes until it ends' : null}
          </span>
        </dd>
        {operation?.error ? (
          <>
            <dt>Error</dt>
            <dd>
              <code>{operation.error.code}</code>: {operation.error.message}
            </dd>
          </>
        ) : null}
        {result !== undefined ? (
          <>
            <dt>Result</dt>
            <dd>
              <pre>
                {result.length > SHOWN_RESULT_CHARS
                  ? `${result.slice(0, SHOWN_RESULT_CHARS)}\n… (${result.length} characters in all: get_operation returns it whole)`
                  : result}
              </pre>
            </dd>
          </>
        ) : null}
      </dl>
      {/* Everyone who may see a decision here may resolve it (decisionsFor is mayGovern). */}
      {decision.status === 'pending' ? <ResolveForm decision={decision} csrf={csrf} refusal={refusal} /> : null}
      <p>
        <a href="/inbox">Back to the inbox</a>
      </p>
    </>
  );
}
