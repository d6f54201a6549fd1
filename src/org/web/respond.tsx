/** Small helpers every page module shares. */
import type { FastifyReply } from 'fastify';
import type { ComponentChildren } from 'preact';
import type { Queryable } from '../../platform/database.js';
import type { OrgContext } from '../context.js';
import { countPendingDecisions } from '../decisions/records.js';
import { isManager, type Person } from '../people/records.js';
import { listSpaceIdsOfPerson } from '../spaces/records.js';
import { countOpenTaskQuestions } from '../tasks/person.js';
import { CONSOLE_SECTIONS, renderPage, type SignedIn } from './layout.js';
import type { Session } from './sessions.js';

export interface WebContext {
  ctx: OrgContext;
  /** HMAC key of CSRF tokens, shared by every process. */
  csrfKey: string;
}

export function sendPage(reply: FastifyReply, status: number, title: string, children: ComponentChildren, signedIn?: SignedIn): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(renderPage({ title, signedIn, children }));
}

/** A form field as a single string; repeated or missing fields count as missing. */
export function formField(body: unknown, name: string): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** Every value of a field a form sends several times (ticked checkboxes): none when absent. */
export function formFields(body: unknown, name: string): string[] {
  if (!body || typeof body !== 'object') return [];
  const value = (body as Record<string, unknown>)[name];
  const values = Array.isArray(value) ? value : [value];
  return values.filter((item): item is string => typeof item === 'string');
}

/** The answer to a form whose CSRF token is missing or wrong: nothing was done. */
export function sendCsrfFailure(reply: FastifyReply): FastifyReply {
  return sendPage(
    reply,
    403,
    'Form expired',
    <>
      <h1>This form has expired</h1>
      <p role="alert">Nothing was changed. Go back, reload the page and try again.</p>
    </>,
  );
}

/** What the inbox asks of the person: decisions awaiting them and open questions on their spaces' tasks. */
export async function countInboxItems(db: Queryable, person: Person): Promise<number> {
  const questions = await countOpenTaskQuestions(db, await listSpaceIdsOfPerson(db, person.id));
  return (await countPendingDecisions(db, person)) + questions;
}

/**
 * One of the signed-in person's own pages (inbox, rules, connections): navigation and the inbox's pending count.
 * The status is the reply's own, 200 unless the page set another (a decision not found is a 404).
 */
export async function sendPersonalPage(
  web: WebContext,
  reply: FastifyReply,
  session: Session,
  csrf: string,
  title: string,
  body: ComponentChildren,
  current?: string,
): Promise<FastifyReply> {
  const pending = await countInboxItems(web.ctx.db, session.person);
  // Only the sections this service serves are linked: a console page not built in is not a dead link.
  const admin = isManager(session.person);
  const sections = CONSOLE_SECTIONS.filter((section) => reply.server.hasRoute({ method: 'GET', url: section.path }) && (admin || !('admins' in section)));
  return sendPage(reply, reply.statusCode, title, body, { name: session.person.name, csrf, pending, current, sections });
}
