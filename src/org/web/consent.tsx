/**
 * GET/POST /consent?request=… (DESIGN 4.6, spec 5.1): the authorization server stores a validated
 * authorization request and sends the browser here. The signed-in person sees which client asks, where
 * it will send them back, and each requested scope with its meaning as a checkbox (the consequential ones
 * unticked), and answers Allow or Deny. The token holds only what was ticked. The answer is a redirect to the
 * client (code or access_denied) built by the authorization server.
 */
import type { FastifyInstance } from 'fastify';
import {
  approveAuthorizationRequest,
  denyAuthorizationRequest,
  getAuthorizationRequest,
  isScope,
  SCOPES,
  type PendingAuthorization,
} from '../../auth/index.js';
import { recordClientAgent } from '../agents/records.js';
import type { Person } from '../people/records.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { formField, formFields, sendCsrfFailure, sendPage, type WebContext } from './respond.js';
import { signInUrl } from './return-to.js';
import { currentSession } from './sessions.js';
import { ORG_DIRECTORY, writeOrg } from '../changes.js';

/**
 * The scopes that let an application act in the world or decide for the person start unticked, each with what it
 * lets the application do in plain words (issue 16 item 9).
 */
const WARNINGS: Record<string, string> = {
  'integrations:act':
    'Warning: lets the application run the organization\'s capabilities — sending, publishing, paying — as you, within the rules and budgets; actions past them wait for a person.',
  'governance:admin':
    'Warning: lets the application approve or deny the actions that wait for you, in your name, without you looking at them.',
};

function UnknownRequest() {
  return (
    <>
      <h1>This request is no longer valid</h1>
      <p role="alert">It has expired or was already answered. Go back to the application and connect again.</p>
    </>
  );
}

interface RequestedScope {
  scope: string;
  meaning: string;
  warning?: string;
}

function Consent({ pending, person, scopes, csrf }: { pending: PendingAuthorization; person: Person; scopes: RequestedScope[]; csrf: string }) {
  return (
    <>
      <h1>Allow {pending.clientName} to act for you?</h1>
      <p>
        <strong>{pending.clientName}</strong> wants to use your organization as <strong>{person.name}</strong> ({person.email}). After you
        answer you will be sent to <strong>{pending.redirectHost}</strong>.
      </p>
      <p>
        You can disconnect it at any time on <a href="/connections">Connected applications</a>.
      </p>
      <form method="post" action="/consent">
        <input type="hidden" name="csrf" value={csrf} />
        <input type="hidden" name="request" value={pending.id} />
        {scopes.length ? (
          <fieldset class="scopes">
            <legend>It asks to — untick what you do not want to allow:</legend>
            {scopes.map(({ scope, meaning, warning }) => (
              <p key={scope} class="check">
                <input type="checkbox" id={`scope-${scope}`} name="scope" value={scope} checked={!warning} aria-describedby={warning ? `warn-${scope}` : undefined} />{' '}
                <label class="inline" for={`scope-${scope}`}>
                  <code>{scope}</code>: {meaning}
                </label>
                {warning ? (
                  <>
                    <br />
                    <small id={`warn-${scope}`} class="warning">
                      {warning}
                    </small>
                  </>
                ) : null}
              </p>
            ))}
          </fieldset>
        ) : (
          <p>It asks for no permissions beyond reading who you are and which spaces you belong to.</p>
        )}
        <div class="actions">
          <button type="submit" name="decision" value="allow">
            Allow
          </button>
          <button type="submit" name="decision" value="deny">
            Deny
          </button>
        </div>
      </form>
    </>
  );
}

export function registerConsentPage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;

  app.get('/consent', async (request, reply) => {
    const requestId = String((request.query as Record<string, unknown>).request ?? '');
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl(`/consent?${new URLSearchParams({ request: requestId })}`), 303);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    const signedIn = { name: session.person.name, csrf };

    const pending = requestId ? await getAuthorizationRequest(ctx, requestId) : null;
    if (!pending) return sendPage(reply, 400, 'Connect an application', <UnknownRequest />, signedIn);

    const scopes = pending.scopes.map((scope) => ({ scope, meaning: isScope(scope) ? SCOPES[scope] : scope, warning: WARNINGS[scope] }));
    const body = <Consent pending={pending} person={session.person} scopes={scopes} csrf={csrf} />;
    return sendPage(reply, 200, 'Connect an application', body, signedIn);
  });

  app.post('/consent', async (request, reply) => {
    const requestId = formField(request.body, 'request') ?? '';
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl(`/consent?${new URLSearchParams({ request: requestId })}`), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const signedIn = { name: session.person.name, csrf: issueCsrfToken(ctx, csrfKey, request, reply, session) };

    const pending = requestId ? await getAuthorizationRequest(ctx, requestId) : null;
    if (!pending) return sendPage(reply, 400, 'Connect an application', <UnknownRequest />, signedIn);

    const decision = formField(request.body, 'decision');
    if (decision === 'allow') {
      // Only what the person ticked: the boxes of consequential scopes start unticked.
      const location = await approveAuthorizationRequest(ctx, pending.id, session.person.id, formFields(request.body, 'scope'));
      // DESIGN 4.1: every client a person authorized is also an agent responsible to that person.
      await writeOrg(ctx, [ORG_DIRECTORY], (tx) => recordClientAgent(tx, { clientId: pending.clientId, clientName: pending.clientName, personId: session.person.id }));
      return reply.redirect(location, 303);
    }
    if (decision === 'deny') return reply.redirect(await denyAuthorizationRequest(ctx, pending.id, session.person.id), 303);
    return sendPage(reply, 400, 'Connect an application', <h1>Choose Allow or Deny</h1>, signedIn);
  });
}
