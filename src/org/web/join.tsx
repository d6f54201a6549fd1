/**
 * GET and POST /join/<token> (DESIGN 4.6, issue 20 item 1): the page an invitation's link opens, for someone not yet
 * signed in. It names the organization and the person invited; the person chooses their password (the rule of
 * ATRIUM_ADMIN_PASSWORD), joins, and is signed in. The link then stops working: a used, withdrawn or expired link
 * answers 410 Gone saying which, a link never issued 404 — never a form that cannot succeed.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { passwordRule } from '../../config.js';
import { isAppError } from '../../platform/errors.js';
import { acceptInvitation, findInvitation } from '../people/invitations.js';
import { hashPassword } from '../people/passwords.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { formField, sendCsrfFailure, sendPage, type WebContext } from './respond.js';
import { startSession } from './sessions.js';
import { ORG_DIRECTORY, writeOrg } from '../changes.js';

type Invitation = NonNullable<Awaited<ReturnType<typeof findInvitation>>>;

const GONE: Record<Exclude<Invitation['state'], 'waiting'>, string> = {
  used: 'This invitation was already used. If it was you, sign in with the password you chose.',
  withdrawn: 'This invitation was withdrawn. Ask the person who invited you for a new one.',
  expired: 'This invitation has expired. Ask the person who invited you for a new one.',
};

export function registerJoinPage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;

  app.get('/join/:token', async (request, reply) => {
    const { token } = request.params as { token: string };
    const invitation = await findInvitation(ctx.db, token);
    if (!invitation || invitation.state !== 'waiting') return sendUnusable(reply, invitation);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, null);
    return sendPage(reply, 200, `Join ${invitation.organization}`, <JoinForm invitation={invitation} csrf={csrf} token={token} />);
  });

  app.post('/join/:token', async (request, reply) => {
    const { token } = request.params as { token: string };
    if (!checkCsrfToken(ctx, csrfKey, request, null, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const invitation = await findInvitation(ctx.db, token);
    if (!invitation || invitation.state !== 'waiting') return sendUnusable(reply, invitation);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, null);
    const refuse = (status: number, error: string) =>
      sendPage(reply, status, `Join ${invitation.organization}`, <JoinForm invitation={invitation} csrf={csrf} token={token} error={error} />);

    const rule = passwordRule.safeParse(formField(request.body, 'password') ?? '');
    if (!rule.success) return refuse(400, `The password ${rule.error.issues[0]?.message}.`);
    let joined: { personId: string } | null;
    try {
      joined = await writeOrg(ctx, [ORG_DIRECTORY], async (tx) => acceptInvitation(tx, token, await hashPassword(rule.data)));
    } catch (error) {
      if (!isAppError(error)) throw error;
      return refuse(error.status, error.message);
    }
    // Used a moment ago by another tab, or withdrawn meanwhile: the page says which.
    if (!joined) return sendUnusable(reply, await findInvitation(ctx.db, token));
    await startSession(ctx, request, reply, joined.personId);
    return reply.redirect('/', 303);
  });
}

function sendUnusable(reply: FastifyReply, invitation: Invitation | null): FastifyReply {
  if (!invitation || invitation.state === 'waiting') {
    return sendPage(
      reply,
      404,
      'Invitation not found',
      <>
        <h1>Invitation not found</h1>
        <p>This link is not an invitation. Check that you copied all of it, or ask for a new one.</p>
      </>,
    );
  }
  return sendPage(
    reply,
    410,
    'Invitation no longer valid',
    <>
      <h1>This invitation can no longer be used</h1>
      <p>{GONE[invitation.state]}</p>
      <p>
        <a href="/signin">Sign in</a>
      </p>
    </>,
  );
}

function JoinForm({ invitation, csrf, token, error }: { invitation: Invitation; csrf: string; token: string; error?: string }): VNode {
  return (
    <>
      <h1>Join {invitation.organization}</h1>
      <p>You were invited to {invitation.organization}. Choose a password to finish; you sign in with your email and this password from now on.</p>
      <dl class="facts">
        <dt>Name</dt>
        <dd>{invitation.name}</dd>
        <dt>Email</dt>
        <dd>{invitation.email}</dd>
      </dl>
      {error ? (
        <p class="error" role="alert" id="join-error">
          {error}
        </p>
      ) : null}
      <form method="post" action={`/join/${encodeURIComponent(token)}`} class="narrow" aria-describedby={error ? 'join-error' : undefined}>
        <input type="hidden" name="csrf" value={csrf} />
        <input type="text" name="username" autocomplete="username" value={invitation.email} hidden />
        <label for="password">Password (at least 8 characters)</label>
        <input id="password" name="password" type="password" autocomplete="new-password" minlength={8} required autofocus />
        <button type="submit">Join {invitation.organization}</button>
      </form>
    </>
  );
}
