/**
 * GET/POST /signin and POST /signout (DESIGN 4.6). Sign-in attempts are counted per email and IP in the
 * database (DESIGN 6) and refused with 429 past the limit, whether or not the password was right.
 */
import type { FastifyInstance } from 'fastify';
import { authenticate, normalizeEmail } from '../people.js';
import { countAttempt, resetAttempts, type RateLimit } from '../../platform/rate-limit.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { html } from './html.js';
import { formField, sendCsrfFailure, sendPage, type WebContext } from './respond.js';
import { DEFAULT_RETURN_TO, safeReturnTo } from './return-to.js';
import { currentSession, endSession, startSession } from './sessions.js';

/** Ten tries per email and address in fifteen minutes: enough for typos, far too few for guessing. */
export const SIGN_IN_LIMIT: RateLimit = { limit: 10, windowSeconds: 15 * 60 };

interface SignInForm {
  email?: string;
  returnTo?: string;
  error?: string;
}

function signInBody(csrf: string, form: SignInForm) {
  return html`<h1>Sign in</h1>
${form.error ? html`<p class="error" role="alert" id="signin-error">${form.error}</p>` : ''}
<form method="post" action="/signin"${form.error ? html` aria-describedby="signin-error"` : ''}>
<input type="hidden" name="csrf" value="${csrf}">
${form.returnTo ? html`<input type="hidden" name="return_to" value="${form.returnTo}">` : ''}
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${form.email ?? ''}"${form.email ? '' : html` autofocus`}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${form.email ? html` autofocus` : ''}>
<button type="submit">Sign in</button>
</form>`;
}

export function registerSignInPages(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;

  app.get('/signin', async (request, reply) => {
    const returnTo = safeReturnTo((request.query as Record<string, unknown>).return_to);
    if (await currentSession(ctx, request)) return reply.redirect(returnTo ?? DEFAULT_RETURN_TO, 303);
    // The sign-in form always binds its token to the pre-session cookie (there is no session yet).
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, null);
    return sendPage(reply, 200, 'Sign in', signInBody(csrf, { returnTo }));
  });

  app.post('/signin', async (request, reply) => {
    if (!checkCsrfToken(csrfKey, request, null, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const email = normalizeEmail(formField(request.body, 'email') ?? '');
    const password = formField(request.body, 'password') ?? '';
    const returnTo = safeReturnTo(formField(request.body, 'return_to'));
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, null);

    const limitKey = `signin:${email}|${request.ip}`;
    const attempt = await countAttempt(ctx.db, limitKey, SIGN_IN_LIMIT);
    if (!attempt.allowed) {
      reply.header('retry-after', String(attempt.retryAfter));
      const minutes = Math.ceil(attempt.retryAfter / 60);
      return sendPage(
        reply,
        429,
        'Sign in',
        signInBody(csrf, { email, returnTo, error: `Too many sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` }),
      );
    }

    const person = email && password ? await authenticate(ctx.db, email, password) : null;
    if (!person) {
      return sendPage(reply, 200, 'Sign in', signInBody(csrf, { email, returnTo, error: 'The email or password is not right.' }));
    }
    await resetAttempts(ctx.db, limitKey);
    await startSession(ctx, reply, person.id);
    return reply.redirect(returnTo ?? DEFAULT_RETURN_TO, 303);
  });

  app.post('/signout', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!checkCsrfToken(csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    await endSession(ctx, request, reply);
    return reply.redirect('/signin', 303);
  });
}
