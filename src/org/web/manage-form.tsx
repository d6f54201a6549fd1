/**
 * The POST of every management form (issue 20 item 1: people, spaces, standing rules), one pipeline for all:
 *
 * 1. signed in, or sent to sign in;
 * 2. the form's CSRF token (csrf.ts);
 * 3. an owner or admin: anyone else gets 403 before their input is even read;
 * 4. every field storable text (a NUL cannot reach PostgreSQL), then the operation's own zod schema: a bad form is
 *    400 naming the field, and nothing is written;
 * 5. the domain function, whose catalogued refusals (403, 404, 409) are shown the same way.
 *
 * Refusals are a page saying what was wrong and that nothing changed, with the status; success redirects (303).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { z } from 'zod';
import { isAppError, type AppError } from '../../platform/errors.js';
import { orgErrors } from '../errors.js';
import { textProblem } from '../fields.js';
import { assertManager } from '../people/manage.js';
import type { Person } from '../people/records.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { formField, sendCsrfFailure, sendPersonalPage, type WebContext } from './respond.js';
import { signInUrl } from './return-to.js';
import { currentSession, type Session } from './sessions.js';

export interface ManagementForm<Schema extends z.ZodType> {
  /** Where the refusal page links back to, and where a signed-out person returns after signing in. */
  back: string;
  /** The operation's input schema (the domain's). */
  input: Schema;
  /** The form's fields as the schema's input; may throw a catalogued error (a field that is not JSON). */
  read(body: unknown, params: Record<string, string>): unknown;
  /**
   * Runs the change; returns where to go next, or a page it sent itself (the one time an invitation's link is
   * shown, a confirmation).
   */
  run(person: Person, input: z.output<Schema>, answer: { reply: FastifyReply; session: Session; csrf: string; params: Record<string, string> }): Promise<string | FastifyReply>;
}

export function managementPost<Schema extends z.ZodType>(app: FastifyInstance, web: WebContext, path: string, form: ManagementForm<Schema>): void {
  const { ctx, csrfKey } = web;
  app.post(path, async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) return reply.redirect(signInUrl(form.back), 303);
    if (!checkCsrfToken(ctx, csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    try {
      assertManager(session.person);
      assertStorable(request.body);
      const params = request.params as Record<string, string>;
      const parsed = form.input.safeParse(form.read(request.body, params));
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw orgErrors.invalidRequest(`${issue.path.join('.') || 'form'}: ${issue.message}`);
      }
      const next = await form.run(session.person, parsed.data, { reply, session, csrf, params });
      return typeof next === 'string' ? reply.redirect(next, 303) : next;
    } catch (error) {
      if (!isAppError(error)) throw error;
      return sendRefusal(web, reply, session, csrf, error, form.back);
    }
  });
}

/** Every submitted value must be storable text (no NUL, no lone surrogate). */
function assertStorable(body: unknown): void {
  if (!body || typeof body !== 'object') return;
  for (const [name, value] of Object.entries(body)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      const problem = typeof item === 'string' ? textProblem(item) : undefined;
      if (problem) throw orgErrors.invalidArgument(name, problem);
    }
  }
}

function sendRefusal(web: WebContext, reply: FastifyReply, session: Session, csrf: string, error: AppError, back: string): Promise<FastifyReply> {
  reply.code(error.status);
  const body = (
    <>
      <h1>Nothing was changed</h1>
      <p class="error" role="alert">
        {error.message}
      </p>
      <p>
        <a href={back}>Go back</a>
      </p>
    </>
  );
  return sendPersonalPage(web, reply, session, csrf, 'Nothing was changed', body);
}
