/**
 * GET /: where a person starts (DESIGN 4.6). Signed in: the pages they use; anyone else: sign in, and what
 * this service is. Pages not built into this service yet are simply not listed.
 */
import type { FastifyInstance } from 'fastify';
import { issueCsrfToken } from './csrf.js';
import { html } from './html.js';
import { sendPage, sendPersonalPage, type WebContext } from './respond.js';
import { currentSession } from './sessions.js';
import { scopeOf } from './console.js';
import { consoleHome } from './console-home.js';

const PAGES = [
  { path: '/inbox', name: 'Inbox', about: 'decisions and questions waiting for you' },
  { path: '/connections', name: 'Connected applications', about: 'the AI clients you allowed, and their permissions' },
  { path: '/rules', name: 'Learned rules', about: 'what you allowed agents to do without asking again' },
  { path: '/connect', name: 'Connect a client', about: 'set up Claude, Cursor, VS Code or your own agent, ready to paste' },
  { path: '/docs', name: 'MCP tools', about: 'what an AI client connected to this organization can do' },
  { path: '/account', name: 'Your account', about: 'change your password' },
];

export function registerHomePage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;
  app.get('/', async (request, reply) => {
    const session = await currentSession(ctx, request);
    const available = PAGES.filter((entry) => app.hasRoute({ method: 'GET', url: entry.path }));
    const links = (entries: typeof PAGES) =>
      html`<ul>${entries.map((entry) => html`<li><a href="${entry.path}">${entry.name}</a>: ${entry.about}</li>`)}</ul>`;
    if (!session) {
      const body = html`<h1>Atrium</h1>
<p>This is the organization server where people and AI agents work together.</p>
<p><a href="/signin">Sign in</a> to see what waits for you and which applications you connected.</p>
${links(available.filter((entry) => entry.path === '/connect' || entry.path === '/docs'))}`;
      return sendPage(reply, 200, 'Welcome', body);
    }
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    const viewer = { session, person: session.person, scope: await scopeOf(web, session.person), csrf };
    return sendPersonalPage(web, reply, session, csrf, 'Home', await consoleHome(web, viewer), '/');
  });
}
