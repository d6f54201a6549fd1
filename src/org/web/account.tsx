/**
 * GET /account and POST /account/password (DESIGN 4.6): who the signed-in person is, and changing their
 * password — the current one and a new one following the rule of ATRIUM_ADMIN_PASSWORD. Changing it signs out
 * the person's other web sessions. Wrong current passwords are slowed down like sign-in attempts (signin.ts),
 * so a borrowed session cannot be used to guess the password and take the account over.
 */
import type { FastifyInstance } from 'fastify';
import { passwordRule } from '../../config.js';
import { claimAttempt, resetAttempts } from '../../platform/rate-limit.js';
import { authenticate, setPassword } from '../people/records.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { formField, sendCsrfFailure, sendPersonalPage, type WebContext } from './respond.js';
import { signInUrl } from './return-to.js';
import { currentSession, type Session } from './sessions.js';
import { SIGN_IN_BACKOFF } from './signin.js';

interface PasswordForm {
  error?: string;
  changed?: boolean;
}

function Account({ session, csrf, form }: { session: Session; csrf: string; form: PasswordForm }) {
  const { person } = session;
  return (
    <>
      <h1>Your account</h1>
      <dl class="facts">
        <dt>Name</dt>
        <dd>{person.name}</dd>
        <dt>Email</dt>
        <dd>{person.email}</dd>
        <dt>Role</dt>
        <dd>{person.role}</dd>
      </dl>
      <h2>Change your password</h2>
      {form.changed ? <p role="status">Your password was changed. Your other sessions were signed out.</p> : null}
      {form.error ? (
        <p class="error" role="alert" id="password-error">
          {form.error}
        </p>
      ) : null}
      <form method="post" action="/account/password" class="narrow" aria-describedby={form.error ? 'password-error' : undefined}>
        <input type="hidden" name="csrf" value={csrf} />
        <input type="text" name="username" autocomplete="username" value={person.email} hidden />
        <label for="current_password">Current password</label>
        <input id="current_password" name="current_password" type="password" autocomplete="current-password" required />
        <label for="new_password">New password (at least 8 characters)</label>
        <input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength={8} required />
        <button type="submit">Change password</button>
      </form>
    </>
  );
}

export function registerAccountPage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;

  app.get('/account', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/account'), 303);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    const changed = (request.query as Record<string, unknown>).done === 'password';
    return sendPersonalPage(web, reply, session, csrf, 'Your account', <Account session={session} csrf={csrf} form={{ changed }} />, '/account');
  });

  app.post('/account/password', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/account'), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    const refuse = (error: string) => sendPersonalPage(web, reply, session, csrf, 'Your account', <Account session={session} csrf={csrf} form={{ error }} />, '/account');

    const current = formField(request.body, 'current_password') ?? '';
    const next = formField(request.body, 'new_password') ?? '';
    const rule = passwordRule.safeParse(next);
    if (!rule.success) return refuse(`The new password ${rule.error.issues[0]?.message}.`);
    const attemptKey = `password-change:${session.person.id}`;
    const attempt = await claimAttempt(ctx.db, attemptKey, SIGN_IN_BACKOFF);
    if (!attempt.allowed) {
      reply.header('retry-after', String(attempt.retryAfter));
      return refuse(`Too many tries. Try again in ${attempt.retryAfter} seconds.`);
    }
    if (!(await authenticate(ctx.db, session.person.email, current))) return refuse('The current password is not right.');
    await resetAttempts(ctx.db, attemptKey);
    await ctx.db.transaction((tx) => setPassword(tx, session.person.id, next, session.id));
    return reply.redirect('/account?done=password', 303);
  });
}
