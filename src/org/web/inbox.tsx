/**
 * GET /inbox and POST /inbox/resolve (DESIGN 4.4, 4.6): the decisions awaiting the signed-in person —
 * actions the runtime gate paused, over agents they are responsible for (all of them for an owner or
 * admin) — with the capability, agent, risk, reasons and the exact input, and Approve / Deny with an
 * optional note and "remember". A person may approve here what their own client asked for — unless the decision
 * needs two or more people's approval (DESIGN 4.8): then it shows how many approved and who, the person the action
 * was asked for and anyone who already approved are offered Deny only, and "remember" is not offered.
 *
 * Below them, the open questions agents asked on tasks in the person's spaces, each with an answer field
 * and Answer (POST /inbox/answer), answered exactly as `answer_task` does.
 *
 * GET /inbox/count answers `{ "pending": n }`, the number every personal page shows beside Inbox.
 */
import type { FastifyInstance } from 'fastify';
import { sendError } from '../../platform/http.js';
import { orgErrors } from '../errors.js';
import { resolveDecision } from '../decisions/resolve.js';
import { listSpaceIdsOfPerson } from '../spaces/records.js';
import { answerTaskInput } from '../tasks/records.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { describeResolver, formatTime, theClient } from './format.js';
import { countInboxItems, formField, sendCsrfFailure, sendPersonalPage, type WebContext } from './respond.js';
import { signInUrl } from './return-to.js';
import { currentSession } from './sessions.js';
import { answerTask, listOpenTaskQuestions, type OpenTaskQuestion } from '../tasks/person.js';
import { countPendingDecisions, decisionContexts, decisionsFor, type DecisionContext, type DecisionRecord } from '../decisions/records.js';

/** Pending decisions shown at once. */
const PENDING_SHOWN = 50;
/** Resolved decisions shown, the most recently resolved first. */
const RESOLVED_SHOWN = 20;

const DONE: Record<string, string> = {
  answered: 'Answered: the agent receives your answer.',
};

export function registerInboxPage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;

  app.get('/inbox', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/inbox'), 303);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    // A page a person can read: the newest decisions, with how many more wait behind them.
    const pending = await decisionsFor(ctx.db, { person: session.person, clientId: null }, { status: 'pending', limit: PENDING_SHOWN });
    const waiting = pending.length < PENDING_SHOWN ? pending.length : await countPendingDecisions(ctx.db, session.person);
    const contexts = await decisionContexts(ctx.db, pending.map((decision) => decision.id));
    const recent = await decisionsFor(ctx.db, { person: session.person, clientId: null }, { status: 'resolved', limit: RESOLVED_SHOWN });
    const done = DONE[(request.query as Record<string, string>).done ?? ''];
    const spaceIds = await listSpaceIdsOfPerson(ctx.db, session.person.id);
    const questions = await listOpenTaskQuestions(ctx.db, spaceIds);

    const body = (
      <Inbox pending={pending} waiting={waiting} contexts={contexts} questions={questions} recent={recent} done={done} csrf={csrf} viewerId={session.person.id} />
    );
    return sendPersonalPage(web, reply, session, csrf, 'Inbox', body, '/inbox');
  });

  // console.js asks this to keep the navigation's count current; JSON, so a signed-out browser gets 401, not a redirect.
  app.get('/inbox/count', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return sendError(orgErrors.unauthorized('sign in to see what waits for you'), reply);
    return { pending: await countInboxItems(ctx.db, session.person) };
  });

  app.post('/inbox/resolve', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/inbox'), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const outcome = formField(request.body, 'outcome');
    const decisionId = formField(request.body, 'decision_id');
    if ((outcome !== 'approve' && outcome !== 'deny') || !decisionId) return reply.redirect('/inbox', 303);
    const note = formField(request.body, 'note')?.trim().slice(0, 2000) || undefined;
    const until = formField(request.body, 'remember_until');
    const remember =
      outcome === 'approve' && formField(request.body, 'remember') === '1'
        ? { same_input: formField(request.body, 'same_input') === '1', ...(until ? { until: endOfDay(until) } : {}) }
        : undefined;
    const resolved = await ctx.db.transaction((tx) =>
      resolveDecision(tx, { decisionId, outcome, note, remember }, { person: session.person, clientId: null }),
    );
    // To what became of the action (outcome.ts), not a promise that it runs.
    return reply.redirect(`/inbox/decisions/${encodeURIComponent(resolved.decision.id)}`, 303);
  });

  app.post('/inbox/answer', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/inbox'), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const parsed = answerTaskInput.safeParse({
      task_id: formField(request.body, 'task_id'),
      question_id: formField(request.body, 'question_id'),
      answer: formField(request.body, 'answer'),
    });
    if (!parsed.success) return reply.redirect('/inbox', 303);
    const spaceIds = await listSpaceIdsOfPerson(ctx.db, session.person.id);
    await answerTask(ctx.db, parsed.data, { personId: session.person.id, clientId: null, spaceIds });
    return reply.redirect('/inbox?done=answered', 303);
  });
}

/** A date picked in the form means "through that day" (UTC). */
function endOfDay(date: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(date) ? `${date}T23:59:59.999Z` : date;
}

/** "1 of 2 approvals: Ada (inbox), Bo (through Claude)": the two-person rule's count as a person reads it (DESIGN 4.8). */
export function describeApprovals(decision: DecisionRecord): string {
  const given = decision.approvals.map((approval) => `${approval.name} (${approval.client ? `through ${approval.client.name ?? 'a client without a name'}` : 'inbox'})`);
  return `${decision.approvals.length} of ${decision.approvals_required} approvals${given.length ? `: ${given.join(', ')}` : ''}`;
}

/**
 * Why the viewer may not approve a pending decision that needs several people, or nothing when they may: they
 * approved already, or the action was asked for on their behalf (they may still deny it).
 */
export function approvalRefusal(decision: DecisionRecord, viewerId: string, askedForId: string | undefined): string | undefined {
  if (decision.approvals_required < 2 || decision.status !== 'pending') return undefined;
  if (decision.approvals.some((approval) => approval.person_id === viewerId)) return "You approved this: it waits for another person's approval.";
  if (askedForId === viewerId) return 'This action was asked for on your behalf, so other people must approve it; you may deny it.';
  return undefined;
}

interface InboxProps {
  pending: DecisionRecord[];
  /** How many decisions wait for the person in all (more than `pending` holds when the list is cut). */
  waiting: number;
  contexts: Map<string, DecisionContext>;
  questions: OpenTaskQuestion[];
  recent: DecisionRecord[];
  done?: string;
  csrf: string;
  /** The signed-in person: whether they may still approve a decision that needs several people. */
  viewerId: string;
}

function Inbox({ pending, waiting, contexts, questions, recent, done, csrf, viewerId }: InboxProps) {
  return (
    <>
      <h1>Inbox</h1>
      {done ? <p role="status">{done}</p> : null}
      <h2>Decisions awaiting you</h2>
      {waiting > pending.length ? (
        <p role="note">
          {waiting} decisions wait for you; the {pending.length} newest are below. Deciding them brings the next ones here.
        </p>
      ) : null}
      {pending.length ? (
        pending.map((decision) => (
          <PendingDecision key={decision.id} decision={decision} context={contexts.get(decision.id)} csrf={csrf} viewerId={viewerId} />
        ))
      ) : (
        <p>Nothing is waiting for you.</p>
      )}
      <h2>Questions from agents</h2>
      {questions.length ? questions.map((question) => <OpenQuestion key={question.question.id} open={question} csrf={csrf} />) : <p>No open questions.</p>}
      <h2>Recently resolved</h2>
      {recent.length ? <RecentlyResolved decisions={recent} /> : <p>Nothing resolved yet.</p>}
    </>
  );
}

function PendingDecision({ decision, context, csrf, viewerId }: { decision: DecisionRecord; context?: DecisionContext; csrf: string; viewerId: string }) {
  const refusal = approvalRefusal(decision, viewerId, context?.askedBy?.id);
  return (
    <section class="card" aria-label={`Decision ${decision.action.capability_name}`}>
      <h3>{decision.action.capability_name}</h3>
      <dl class="facts">
        <DecisionFacts decision={decision} context={context} />
      </dl>
      <ResolveForm decision={decision} csrf={csrf} refusal={refusal} />
    </section>
  );
}

/** What a person weighs before deciding, as `dt`/`dd` pairs: the inbox's cards and the decision page (outcome.tsx). */
export function DecisionFacts({ decision, context }: { decision: DecisionRecord; context?: DecisionContext }) {
  return (
    <>
      <dt>Capability</dt>
      <dd>{decision.action.capability_key}</dd>
      <dt>Agent</dt>
      <dd>{decision.agent.name}</dd>
      {context ? <AskedBy context={context} requestedAt={decision.requested_at} /> : null}
      <dt>Risk</dt>
      <dd>
        <span class={`badge ${decision.risk}`}>{decision.risk}</span>
      </dd>
      <dt>Why it paused</dt>
      <dd>
        <ul>
          {decision.reasons.map((reason, index) => (
            <li key={index}>{reason}</li>
          ))}
        </ul>
      </dd>
      <dt>Arguments</dt>
      <dd>
        <pre>{JSON.stringify(decision.action.input, null, 2)}</pre>
      </dd>
      {decision.approvals_required > 1 ? (
        <>
          <dt>Approvals</dt>
          <dd>{describeApprovals(decision)}</dd>
        </>
      ) : null}
      <dt>Expires</dt>
      <dd>{formatTime(decision.expires_at)}</dd>
    </>
  );
}

/**
 * Approve / Deny with an optional note and "remember", posted to /inbox/resolve. `refusal` says why this person may
 * not approve (the two-person rule): they see why, and Deny only.
 */
export function ResolveForm({ decision, csrf, refusal }: { decision: DecisionRecord; csrf: string; refusal?: string }) {
  const id = decision.id;
  return (
    <form method="post" action="/inbox/resolve">
      {refusal ? <p role="note">{refusal}</p> : null}
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="decision_id" value={id} />
      <label for={`note-${id}`}>Note (optional)</label>
      <textarea id={`note-${id}`} name="note" rows={2} maxlength={2000} />
      {/* A learned rule would let one person waive the two-person rule next time (decisions/resolve.ts). */}
      {decision.approvals_required > 1 ? null : <RememberFields decision={decision} />}
      <div class="actions">
        {refusal ? null : (
          <button type="submit" name="outcome" value="approve">
            Approve
          </button>
        )}
        <button type="submit" name="outcome" value="deny">
          Deny
        </button>
      </div>
    </form>
  );
}

function RememberFields({ decision }: { decision: DecisionRecord }) {
  const id = decision.id;
  return (
    <>
      <p class="check">
        <input type="checkbox" id={`remember-${id}`} name="remember" value="1" />{' '}
        <label class="inline" for={`remember-${id}`}>
          Remember: let {decision.agent.name} do this without asking again
        </label>
      </p>
      <p class="check">
        <input type="checkbox" id={`same-${id}`} name="same_input" value="1" />{' '}
        <label class="inline" for={`same-${id}`}>
          Only with these exact arguments
        </label>
      </p>
      <label for={`until-${id}`}>Remember until (optional)</label>
      <input type="date" id={`until-${id}`} name="remember_until" />
    </>
  );
}

/** Who asked and when, what it costs against the agent's budget, and where the action goes. */
function AskedBy({ context, requestedAt }: { context: DecisionContext; requestedAt: string }) {
  const who = context.askedBy ? `${context.askedBy.name} (${context.askedBy.email})` : 'a person no longer in the organization';
  const through = context.client ? `through ${theClient(context.client)}` : 'through the agent API';
  const remaining = context.budget === null ? 'no monthly budget' : `${Math.max(context.budget - context.used, 0)} of ${context.budget} units left this month`;
  return (
    <>
      <dt>Asked by</dt>
      <dd>{`${who}, ${through}, ${formatTime(requestedAt)}`}</dd>
      <dt>Cost</dt>
      <dd>{`${context.cost} units (${remaining})`}</dd>
      <dt>Sends to</dt>
      <dd>
        <code>{context.destination}</code>
      </dd>
    </>
  );
}

function OpenQuestion({ open, csrf }: { open: OpenTaskQuestion; csrf: string }) {
  const { task_id, task_title, question } = open;
  return (
    <section class="card" aria-label={`Question on ${task_title}`}>
      <h3>{task_title}</h3>
      <p>{question.text}</p>
      <form method="post" action="/inbox/answer">
        <input type="hidden" name="csrf" value={csrf} />
        <input type="hidden" name="task_id" value={task_id} />
        <input type="hidden" name="question_id" value={question.id} />
        <label for={`answer-${question.id}`}>Your answer</label>
        <textarea id={`answer-${question.id}`} name="answer" rows={3} maxlength={10000} required />
        <div class="actions">
          <button type="submit">Answer</button>
        </div>
      </form>
    </section>
  );
}

function RecentlyResolved({ decisions }: { decisions: DecisionRecord[] }) {
  return (
    <table class="stack">
      <thead>
        <tr>
          <th scope="col">Action</th>
          <th scope="col">Outcome</th>
          <th scope="col">Resolved by</th>
          <th scope="col">When</th>
        </tr>
      </thead>
      <tbody>
        {decisions.map((decision) => (
          <tr key={decision.id}>
            <th scope="row">
              <a href={`/inbox/decisions/${decision.id}`}>{decision.action.capability_name}</a>
            </th>
            <td data-label="Outcome">
              <span class={`badge ${decision.status}`}>{decision.status}</span>
            </td>
            <td data-label="Resolved by">
              {decision.resolved_by ? describeResolver(decision.resolved_by) : 'nobody (it expired)'}
              {decision.approvals_required > 1 ? `; ${describeApprovals(decision)}` : null}
            </td>
            <td data-label="When">{formatTime(decision.resolved_at ?? decision.expires_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
