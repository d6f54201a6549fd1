/**
 * GET /account, POST /account/name, /account/password, /account/notifications and /account/sessions (DESIGN 4.6, 4.8):
 * who the signed-in person is and the name others know them by (one the organization file declares is named there),
 * whether they are emailed when a decision or a question waits for them, changing their password — the current one and
 * a new one following the rule of ATRIUM_ADMIN_PASSWORD — and the browsers they are signed in on. Changing the
 * password signs out the person's other web sessions, as "Sign out everywhere else" does. Wrong current passwords are
 * slowed down like sign-in attempts (signin.ts), so a borrowed session cannot be used to guess the password and take
 * the account over.
 */
import type { FastifyInstance } from 'fastify';
import { passwordRule } from '../../config.js';
import { claimAttempt, resetAttempts } from '../../platform/rate-limit.js';
import { authenticate, emailNotificationsOf, personManagedBy, personName, renamePerson, setEmailNotifications, setPassword } from '../people/records.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { formField, sendCsrfFailure, sendPersonalPage, type WebContext } from './respond.js';
import { signInUrl } from './return-to.js';
import { currentSession, endOtherSessions, signedInBrowsers, type Session, type SignedInBrowser } from './sessions.js';
import { ColumnHeads, Time } from './parts.js';
import { SIGN_IN_BACKOFF } from './signin.js';
import { ORG_DIRECTORY, writeOrg } from '../changes.js';
import { orgFileName } from './manage.js';

interface PasswordForm {
  error?: string;
  changed?: boolean;
}

/** The name form: the file that names the person (no form then), or what was refused and the value typed. */
interface NameForm {
  fromFile?: string;
  error?: string;
  value?: string;
  changed?: boolean;
  /** The name sent was the one the person has. */
  kept?: boolean;
}

/** The email choice as the page shows it: saved just now or not, and whether the organization sends email at all. */
interface EmailChoice {
  on: boolean;
  saved: boolean;
  mailConfigured: boolean;
}

/** The browsers the person is signed in on, and how many sessions "Sign out everywhere else" just ended. */
interface Browsers {
  browsers: SignedInBrowser[];
  total: number;
  ended?: number;
}

const DONE = { name: 'name', nameKept: 'name_kept', password: 'password', notifications: 'notifications', sessions: 'sessions' } as const;

interface AccountParts {
  form: PasswordForm;
  email: EmailChoice;
  name: NameForm;
  browsers: Browsers;
}

function Account({ session, csrf, form, email, name, browsers }: { session: Session; csrf: string } & AccountParts) {
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
      <h2>Your name</h2>
      {name.fromFile ? (
        <p role="note">Your name is set in {name.fromFile}, the organization file: it is changed there.</p>
      ) : (
        <>
          {name.changed ? <p role="status">Saved: people and agents now see you as {person.name}.</p> : null}
          {name.kept ? <p role="status">Nothing to change: that is already your name.</p> : null}
          {name.error ? (
            <p class="error" role="alert" id="name-error">
              {name.error}
            </p>
          ) : null}
          <form method="post" action="/account/name" class="narrow" aria-describedby={name.error ? 'name-error' : undefined}>
            <input type="hidden" name="csrf" value={csrf} />
            <label for="name">Name</label>
            <input id="name" name="name" value={name.value ?? person.name} autocomplete="name" maxLength={200} required aria-describedby="name-help" />
            <small id="name-help">How the inbox, the activity log, decisions and agents name you. What was recorded before keeps the name it was recorded with.</small>
            <button type="submit">Change name</button>
          </form>
        </>
      )}
      <h2>Email</h2>
      {email.saved ? (
        <p role="status">
          {email.on
            ? 'Saved: you are emailed when a decision or a question waits for you.'
            : 'Saved: you get no more emails. Decisions and questions still wait for you in the inbox.'}
        </p>
      ) : null}
      {email.mailConfigured ? null : <p role="note">This organization sends no email yet: its server has no SMTP_URL set.</p>}
      <form method="post" action="/account/notifications" class="narrow">
        <input type="hidden" name="csrf" value={csrf} />
        <p class="check">
          <input type="checkbox" id="email_notifications" name="email_notifications" value="1" checked={email.on} />{' '}
          <label class="inline" for="email_notifications">
            Email me when a decision or a question waits for me
          </label>
        </p>
        <button type="submit">Save</button>
      </form>
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
      <SignedIn csrf={csrf} {...browsers} />
    </>
  );
}

function SignedIn({ csrf, browsers, total, ended }: { csrf: string } & Browsers) {
  const others = total - 1;
  return (
    <section aria-labelledby="signed-in">
      <h2 id="signed-in">Where you are signed in</h2>
      {ended !== undefined ? (
        <p role="status">{ended ? `Signed out of ${ended} other session${ended === 1 ? '' : 's'}.` : 'You were not signed in anywhere else.'}</p>
      ) : null}
      <table class="stack">
        <ColumnHeads names={['Browser', 'Signed in', 'Until']} />
        <tbody>
          {browsers.map((browser, index) => (
            <tr key={index}>
              <th scope="row">
                {browser.browser}
                {browser.current ? <strong> (this browser)</strong> : null}
              </th>
              <td data-label="Signed in">
                <Time value={browser.signedInAt} />
              </td>
              <td data-label="Until">
                <Time value={browser.expiresAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {total > browsers.length ? <p>And {total - browsers.length === 1 ? 'one older session' : `${total - browsers.length} older sessions`}.</p> : null}
      {others > 0 ? (
        <form method="post" action="/account/sessions" class="narrow">
          <input type="hidden" name="csrf" value={csrf} />
          <button type="submit">Sign out everywhere else</button>
          <small>
            Ends your {others === 1 ? 'other session' : `${others} other sessions`} at once; this browser stays signed in. Applications
            you connected keep their access: <a href="/connections">disconnect them</a> there.
          </small>
        </form>
      ) : (
        <p>Only this browser is signed in.</p>
      )}
    </section>
  );
}

export function registerAccountPage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;

  const emailChoice = async (session: Session, saved: boolean): Promise<EmailChoice> => ({
    on: await emailNotificationsOf(ctx.db, session.person.id),
    saved,
    mailConfigured: !!ctx.config.mail,
  });
  const file = orgFileName(ctx.config);
  const nameForm = async (session: Session, form: Omit<NameForm, 'fromFile'>): Promise<NameForm> =>
    (await personManagedBy(ctx.db, session.person.id)) === 'file' ? { fromFile: file } : form;
  /** Every part of the page as it stands, with what the request changes or refused. */
  const parts = async (session: Session, given: { form?: PasswordForm; saved?: boolean; name?: Omit<NameForm, 'fromFile'>; ended?: number }): Promise<AccountParts> => {
    const [email, name, browsers] = await Promise.all([emailChoice(session, given.saved ?? false), nameForm(session, given.name ?? {}), signedInBrowsers(ctx.db, session)]);
    return { form: given.form ?? {}, email, name, browsers: { ...browsers, ended: given.ended } };
  };

  app.get('/account', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/account'), 303);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    const query = request.query as Record<string, unknown>;
    const done = query.done;
    // How many sessions the button ended, as its redirect says; anything but a small count is ignored.
    const ended = done === DONE.sessions && typeof query.ended === 'string' && /^\d{1,6}$/.test(query.ended) ? Number(query.ended) : undefined;
    const given = { form: { changed: done === DONE.password }, saved: done === DONE.notifications, name: { changed: done === DONE.name, kept: done === DONE.nameKept }, ended };
    const page = <Account session={session} csrf={csrf} {...await parts(session, given)} />;
    return sendPersonalPage(web, reply, session, csrf, 'Your account', page, '/account');
  });

  app.post('/account/name', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/account'), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const typed = formField(request.body, 'name') ?? '';
    const parsed = personName.safeParse(typed);
    if (!parsed.success) {
      const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
      const page = <Account session={session} csrf={csrf} {...await parts(session, { name: { error: `The name ${parsed.error.issues[0]?.message}.`, value: typed } })} />;
      return sendPersonalPage(web, reply.code(400), session, csrf, 'Your account', page, '/account');
    }
    // Names are read from memory by every process (service_context, sessions): the change is announced.
    const renamed = await writeOrg(ctx, [ORG_DIRECTORY], (tx) => renamePerson(tx, session.person.id, parsed.data, file));
    return reply.redirect(`/account?done=${renamed ? DONE.name : DONE.nameKept}`, 303);
  });

  // An unticked checkbox sends nothing: its absence is the choice "off".
  app.post('/account/notifications', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/account'), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const on = formField(request.body, 'email_notifications') === '1';
    await writeOrg(ctx, [ORG_DIRECTORY], (tx) => setEmailNotifications(tx, session.person.id, on));
    return reply.redirect(`/account?done=${DONE.notifications}`, 303);
  });

  app.post('/account/password', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/account'), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    const refuse = async (error: string) =>
      sendPersonalPage(web, reply, session, csrf, 'Your account', <Account session={session} csrf={csrf} {...await parts(session, { form: { error } })} />, '/account');

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
    await writeOrg(ctx, [ORG_DIRECTORY], (tx) => setPassword(tx, session.person.id, next, session.id));
    return reply.redirect(`/account?done=${DONE.password}`, 303);
  });

  app.post('/account/sessions', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl('/account'), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const ended = await endOtherSessions(ctx.db, session);
    return reply.redirect(`/account?done=${DONE.sessions}&ended=${ended}#signed-in`, 303);
  });
}
