/**
 * Signed-in browsers (DESIGN 4.6). The cookie carries a random 256-bit token, signed with the shared
 * cookie key; the database keeps only its SHA-256, so any process can serve any request (DESIGN 6) and a
 * leaked database does not leak sessions. HttpOnly, SameSite=Lax, and when the public URL is https Secure
 * and named with the `__Host-` prefix (RFC 6265bis §4.1.3.2), so no sibling subdomain can plant or overwrite it.
 */
import { createHash, randomBytes } from 'node:crypto';
import Bowser from 'bowser';
import { and, desc, eq, gt, lte, sql } from 'drizzle-orm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { inTransaction, type Queryable } from '../../platform/database.js';
import type { OrgContext } from '../context.js';
import { recordActivity } from '../activity/records.js';
import { endWebSessions, getPerson, type Person } from '../people/records.js';
import { webSessions } from '../schema.js';

const SESSION_COOKIE = 'atrium_session';
const SESSION_SECONDS = 12 * 60 * 60;

export interface Session {
  /** The stored id (hash of the cookie's token); also what CSRF tokens of a signed-in page bind to. */
  id: string;
  person: Person;
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

export function cookieOptions(ctx: OrgContext) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: isHttps(ctx),
    signed: true,
  };
}

/** A cookie's name: `__Host-` prefixed over https (which requires Secure, Path=/ and no Domain, as set above). */
export function cookieName(ctx: OrgContext, name: string): string {
  return isHttps(ctx) ? `__Host-${name}` : name;
}

function isHttps(ctx: OrgContext): boolean {
  return ctx.config.publicUrl.startsWith('https:');
}

/** How much of a User-Agent is kept: enough for any browser's, bounded against a made-up one. */
const USER_AGENT_KEPT = 512;

/**
 * Signs the person in: a new session, with the browser it came from (its User-Agent), recorded as
 * `person.signed_in` in its transaction.
 */
export async function startSession(ctx: OrgContext, request: FastifyRequest, reply: FastifyReply, personId: string): Promise<void> {
  const token = randomBytes(32).toString('base64url');
  await ctx.db.transaction(async (tx) => {
    await tx.insert(webSessions).values({
      id: hashToken(token),
      personId,
      expiresAt: sql`now() + make_interval(secs => ${SESSION_SECONDS})`,
      userAgent: request.headers['user-agent']?.slice(0, USER_AGENT_KEPT) || null,
    });
    await recordActivity(tx, { kind: 'person.signed_in', summary: 'signed in on the web', personId });
  });
  reply.setCookie(cookieName(ctx, SESSION_COOKIE), token, { ...cookieOptions(ctx), maxAge: SESSION_SECONDS });
}

/** Deletes expired sessions (the housekeeping job); an expired one already opens nothing. */
export async function deleteExpiredWebSessions(db: Queryable): Promise<number> {
  const deleted = await db.delete(webSessions).where(lte(webSessions.expiresAt, sql`now()`)).returning({ id: webSessions.id });
  return deleted.length;
}

/** The session of this request, or null when the cookie is missing, tampered with, unknown or expired. */
export async function currentSession(ctx: OrgContext, request: FastifyRequest): Promise<Session | null> {
  const token = unsignedCookie(request, cookieName(ctx, SESSION_COOKIE));
  if (!token) return null;
  const id = hashToken(token);
  const [row] = await ctx.db
    .select({ personId: webSessions.personId })
    .from(webSessions)
    .where(and(eq(webSessions.id, id), gt(webSessions.expiresAt, sql`now()`)));
  if (!row) return null;
  const person = await getPerson(ctx.db, row.personId);
  return person ? { id, person } : null;
}

/** One of a person's signed-in browsers, as /account lists them. */
export interface SignedInBrowser {
  /** Whether it is the browser asking. */
  current: boolean;
  /** "Firefox 140 on Windows", from the User-Agent it signed in with. */
  browser: string;
  signedInAt: string;
  expiresAt: string;
}

/** The most sessions /account lists (newest first); the rest are counted. A session lasts 12 hours. */
const BROWSERS_LISTED = 20;

/** The person's live sessions, newest first, at most `BROWSERS_LISTED`, and how many there are. */
export async function signedInBrowsers(db: Queryable, session: Session): Promise<{ browsers: SignedInBrowser[]; total: number }> {
  const live = and(eq(webSessions.personId, session.person.id), gt(webSessions.expiresAt, sql`now()`));
  const [rows, [{ total }]] = await Promise.all([
    db
      .select({ id: webSessions.id, userAgent: webSessions.userAgent, createdAt: webSessions.createdAt, expiresAt: webSessions.expiresAt })
      .from(webSessions)
      .where(live)
      .orderBy(desc(webSessions.createdAt), desc(webSessions.id))
      .limit(BROWSERS_LISTED),
    db.select({ total: sql<number>`count(*)::int` }).from(webSessions).where(live),
  ]);
  return {
    browsers: rows.map((row) => ({ current: row.id === session.id, browser: browserName(row.userAgent), signedInAt: row.createdAt, expiresAt: row.expiresAt })),
    total,
  };
}

/** A browser's name and major version and its system, as a person would say it; "An unknown browser" otherwise. */
function browserName(userAgent: string | null): string {
  if (!userAgent) return 'An unknown browser';
  const { browser, os } = Bowser.parse(userAgent);
  if (!browser.name) return 'An unknown browser';
  const major = browser.version?.split('.')[0];
  return `${browser.name}${major ? ` ${major}` : ''}${os.name ? ` on ${os.name}` : ''}`;
}

/**
 * Signs the person out of every browser but this one (a phone lost, a shared computer left signed in), recorded as
 * `person.signed_out` with the count of live sessions ended, as the page counts them, when there were any.
 */
export async function endOtherSessions(db: Queryable, session: Session): Promise<number> {
  return inTransaction(db, async (tx) => {
    const ended = await endWebSessions(tx, session.person.id, session.id);
    if (ended) {
      await recordActivity(tx, {
        kind: 'person.signed_out',
        summary: `signed out of ${ended} other web session${ended === 1 ? '' : 's'}`,
        personId: session.person.id,
        details: { sessions_ended: ended },
      });
    }
    return ended;
  });
}

/** Signs out: the session ends, recorded as `person.signed_out` when there was one. */
export async function endSession(ctx: OrgContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const token = unsignedCookie(request, cookieName(ctx, SESSION_COOKIE));
  if (token) {
    await ctx.db.transaction(async (tx) => {
      const [ended] = await tx.delete(webSessions).where(eq(webSessions.id, hashToken(token))).returning({ personId: webSessions.personId });
      if (ended) await recordActivity(tx, { kind: 'person.signed_out', summary: 'signed out on the web', personId: ended.personId });
    });
  }
  reply.clearCookie(cookieName(ctx, SESSION_COOKIE), { ...cookieOptions(ctx), signed: undefined });
}

/** A signed cookie's value, or undefined when absent or its signature does not verify. */
export function unsignedCookie(request: FastifyRequest, name: string): string | undefined {
  const raw = request.cookies[name];
  if (!raw) return undefined;
  const result = request.unsignCookie(raw);
  return result.valid && result.value ? result.value : undefined;
}
