/**
 * What every console page shares (DESIGN 4.6): it is for a signed-in person (anyone else is sent to sign in and
 * brought back), it shows only what the person's scope allows, and its query string is checked before any read.
 *
 * Scope: owners and admins see the whole organization; anyone else sees the records of the spaces they belong
 * to and what was done by them or on their behalf — never another space's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ComponentChildren } from 'preact';
import type { z } from 'zod';
import { platformErrors } from '../../platform/errors.js';
import type { Person } from '../people/records.js';
import { listSpaceIdsOfPerson } from '../spaces/records.js';
import { checkCsrfToken, issueCsrfToken } from './csrf.js';
import { formField, sendCsrfFailure, sendPersonalPage, type WebContext } from './respond.js';
import { signInUrl } from './return-to.js';
import { currentSession, type Session } from './sessions.js';

export interface Scope {
  /** An owner or admin: everything. */
  all: boolean;
  personId: string;
  /** The person's spaces (for an owner or admin too: what is theirs, for defaults). */
  spaceIds: string[];
}

export interface Viewer {
  session: Session;
  person: Person;
  scope: Scope;
  /** The CSRF token for the page's forms (and the sign-out form). */
  csrf: string;
}

export async function scopeOf(web: WebContext, person: Person): Promise<Scope> {
  const spaceIds = await listSpaceIdsOfPerson(web.ctx.db, person.id);
  return { all: person.role === 'owner' || person.role === 'admin', personId: person.id, spaceIds };
}

export interface ConsolePage {
  title: string;
  body: ComponentChildren;
}

/**
 * `GET path` as a console page: `query` (a zod schema) checks the query string, and a bad one is answered 400
 * with what was wrong, before `render` reads anything. `render` returns the page, or a reply it sent itself
 * (a redirect, a download, a 404).
 */
export function consolePage<Query extends z.ZodType, Params extends Record<string, string> = Record<string, never>>(
  app: FastifyInstance,
  web: WebContext,
  path: string,
  query: Query,
  render: (viewer: Viewer, input: { query: z.output<Query>; params: Params; request: FastifyRequest; reply: FastifyReply }) => Promise<ConsolePage | FastifyReply>,
): void {
  app.get(path, async (request, reply) => {
    const session = await currentSession(web.ctx, request);
    if (!session) return reply.redirect(signInUrl(request.url), 303);
    const parsed = query.safeParse(request.query ?? {});
    if (!parsed.success) {
      const problem = parsed.error.issues[0];
      throw platformErrors.invalidRequest(`${problem.path.join('.') || 'query'}: ${problem.message}`);
    }
    const csrf = issueCsrfToken(web.ctx, web.csrfKey, request, reply, session);
    const viewer: Viewer = { session, person: session.person, scope: await scopeOf(web, session.person), csrf };
    const result = await render(viewer, { query: parsed.data, params: request.params as Params, request, reply });
    if ('title' in result && 'body' in result) return sendPersonalPage(web, reply, session, csrf, result.title, result.body, request.routeOptions.url);
    return result;
  });
}

export interface ConsolePostInput<Params> {
  body: unknown;
  params: Params;
  request: FastifyRequest;
  reply: FastifyReply;
}

/**
 * `consolePost`'s `admit` for forms any signed-in person may post (memory, tasks, a question): what they may write is
 * the domain's to check, with their own spaces.
 */
export function anyoneSignedIn(): void {}

/**
 * `POST path` of a console form: a signed-in person (else sign-in, then the section, not a form post that cannot be
 * replayed), with the CSRF token (else "form expired", nothing done), whom `admit` lets post (it throws for anyone
 * else: a management form's 403). `handle` returns the page to show (the form again with its problems and a 400 it
 * set, a secret shown once) or a reply it sent itself (a redirect).
 */
export function consolePost<Params extends Record<string, string>>(
  app: FastifyInstance,
  web: WebContext,
  route: string,
  admit: (person: Person) => void,
  handle: (viewer: Viewer, input: ConsolePostInput<Params>) => Promise<ConsolePage | FastifyReply>,
): void {
  const section = `/${route.split('/')[1]}`;
  app.post(route, async (request, reply) => {
    const session = await currentSession(web.ctx, request);
    if (!session) return reply.redirect(signInUrl(section), 303);
    if (!checkCsrfToken(web.ctx, web.csrfKey, request, session, formField(request.body, 'csrf'))) return sendCsrfFailure(reply);
    admit(session.person);
    const csrf = issueCsrfToken(web.ctx, web.csrfKey, request, reply, session);
    const viewer: Viewer = { session, person: session.person, scope: await scopeOf(web, session.person), csrf };
    const result = await handle(viewer, { body: request.body, params: request.params as Params, request, reply });
    // A redirect was sent already (fastify's send() may answer undefined once the reply is on its way).
    if (reply.sent || !('title' in result)) return reply;
    return sendPersonalPage(web, reply, session, csrf, result.title, result.body, section);
  });
}
