/**
 * GET/POST /signin and POST /signout (DESIGN 4.6). Sign-in attempts are throttled twice, in the database
 * so every process shares the counts (DESIGN 6), and refused with 429 and Retry-After:
 *
 * - per address, across all emails: one password sprayed over many accounts is slowed like a guess at one
 *   (a successful sign-in gives its attempt back, so people sharing an address are not counted);
 * - per email and address, with a backoff (OWASP Authentication Cheat Sheet, "Login Throttling") rather
 *   than a long lock, so a stranger's failures can delay the person by at most a minute, never lock them out.
 */
import type { FastifyInstance } from 'fastify';
import type { Queryable } from '../../platform/database.js';
import { authenticate, normalizeEmail } from '../people/records.js';
import { claimAttempt, countAttempt, forgiveAttempt, resetAttempts, type Backoff, type RateLimit, type RateLimitOutcome } from '../../platform/rate-limit.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { formField, sendCsrfFailure, sendPage, type WebContext } from './respond.js';
import { DEFAULT_RETURN_TO, safeReturnTo } from './return-to.js';
import { currentSession, endSession, startSession } from './sessions.js';

/** Thirty failed tries from one address in fifteen minutes, whichever emails they name. */
export const SIGN_IN_ADDRESS_LIMIT: RateLimit = { limit: 30, windowSeconds: 15 * 60 };

/** Five tries per email and address at once, then 1, 2, 4 … seconds apart, at most a minute; forgotten after 15 quiet minutes. */
export const SIGN_IN_BACKOFF: Backoff = { free: 5, baseSeconds: 1, maxSeconds: 60, memorySeconds: 15 * 60 };

interface SignInState {
  email?: string;
  returnTo?: string;
  error?: string;
}

function SignInForm({ csrf, form }: { csrf: string; form: SignInState }) {
  return (
    <>
      <h1>Sign in</h1>
      {form.error ? (
        <p class="error" role="alert" id="signin-error">
          {form.error}
        </p>
      ) : null}
      <form method="post" action="/signin" class="narrow" aria-describedby={form.error ? 'signin-error' : undefined}>
        <input type="hidden" name="csrf" value={csrf} />
        {form.returnTo ? <input type="hidden" name="return_to" value={form.returnTo} /> : null}
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value={form.email ?? ''} autofocus={!form.email} />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required autofocus={!!form.email} />
        <button type="submit">Sign in</button>
      </form>
    </>
  );
}

export function registerSignInPages(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;

  app.get('/signin', async (request, reply) => {
    const returnTo = safeReturnTo((request.query as Record<string, unknown>).return_to);
    if (await currentSession(ctx, request)) return reply.redirect(returnTo ?? DEFAULT_RETURN_TO, 303);
    // The sign-in form always binds its token to the pre-session cookie (there is no session yet).
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, null);
    return sendPage(reply, 200, 'Sign in', <SignInForm csrf={csrf} form={{ returnTo }} />);
  });

  app.post('/signin', async (request, reply) => {
    if (!checkCsrfToken(ctx, csrfKey, request, null, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const email = normalizeEmail(formField(request.body, 'email') ?? '');
    const password = formField(request.body, 'password') ?? '';
    const returnTo = safeReturnTo(formField(request.body, 'return_to'));
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, null);

    const addressKey = `signin-address:${request.ip}`;
    const accountKey = `signin:${email}|${request.ip}`;
    const throttled = await throttle(ctx.db, addressKey, accountKey);
    if (throttled) {
      reply.header('retry-after', String(throttled.retryAfter));
      return sendPage(
        reply,
        429,
        'Sign in',
        <SignInForm csrf={csrf} form={{ email, returnTo, error: `Too many sign-in attempts. Try again in ${describeWait(throttled.retryAfter)}.` }} />,
      );
    }

    const person = email && password ? await authenticate(ctx.db, email, password) : null;
    if (!person) {
      return sendPage(reply, 200, 'Sign in', <SignInForm csrf={csrf} form={{ email, returnTo, error: 'The email or password is not right.' }} />);
    }
    await resetAttempts(ctx.db, accountKey);
    await forgiveAttempt(ctx.db, addressKey);
    await startSession(ctx, request, reply, person.id);
    return reply.redirect(returnTo ?? DEFAULT_RETURN_TO, 303);
  });

  app.post('/signout', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    await endSession(ctx, request, reply);
    return reply.redirect('/signin', 303);
  });
}

/** The refusal of an attempt past either limit, or null when it may go ahead (and has been counted). */
async function throttle(db: Queryable, addressKey: string, accountKey: string): Promise<RateLimitOutcome | null> {
  const address = await countAttempt(db, addressKey, SIGN_IN_ADDRESS_LIMIT);
  if (!address.allowed) return address;
  const account = await claimAttempt(db, accountKey, SIGN_IN_BACKOFF);
  return account.allowed ? null : account;
}

function describeWait(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}
