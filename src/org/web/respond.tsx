/** Small helpers every page module shares. */
import type { FastifyReply } from 'fastify';
import type { OrgContext } from '../context.js';
import { listSpaceIdsOfPerson } from '../spaces/records.js';
import type { ComponentChildren } from 'preact';
import { html, SafeHtml } from './html.js';
import { renderPage, type SignedIn } from './layout.js';
import type { Session } from './sessions.js';
import { countOpenTaskQuestions } from '../tasks/person.js';
import { countPendingDecisions } from '../decisions/records.js';

export interface WebContext {
  ctx: OrgContext;
  /** HMAC key of CSRF tokens, shared by every process. */
  csrfKey: string;
}

export function sendPage(
  reply: FastifyReply,
  status: number,
  title: string,
  body: SafeHtml | ComponentChildren,
  signedIn?: SignedIn,
): FastifyReply {
  // A page still written with the old `html` template arrives as SafeHtml, already escaped.
  const children = body instanceof SafeHtml ? <div dangerouslySetInnerHTML={{ __html: body.value }} /> : body;
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
    html`<h1>This form has expired</h1><p role="alert">Nothing was changed. Go back, reload the page and try again.</p>`,
  );
}

/**
 * One of the signed-in person's own pages (inbox, rules, connections): navigation and the pending count, which
 * counts what the inbox asks of the person: decisions awaiting them and open questions on their spaces' tasks.
 * The status is the reply's own, 200 unless the page set another (an operation not found is a 404).
 */
export async function sendPersonalPage(
  web: WebContext,
  reply: FastifyReply,
  session: Session,
  csrf: string,
  title: string,
  body: SafeHtml | ComponentChildren,
  current?: string,
): Promise<FastifyReply> {
  const { db } = web.ctx;
  const questions = await countOpenTaskQuestions(db, await listSpaceIdsOfPerson(db, session.person.id));
  const pending = (await countPendingDecisions(db, session.person)) + questions;
  return sendPage(reply, reply.statusCode, title, body, { name: session.person.name, csrf, pending, current });
}
