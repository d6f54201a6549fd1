/**
 * GET /: where a person starts (DESIGN 4.6). Signed in: the console's home (console-home.tsx); anyone else: sign
 * in, what this service is, and the two pages open to everyone.
 */
import type { FastifyInstance } from 'fastify';
import { issueCsrfToken } from './csrf.js';
import { sendPage, sendPersonalPage, type WebContext } from './respond.js';
import { currentSession } from './sessions.js';
import { scopeOf } from './console.js';
import { consoleHome } from './console-home.js';

const PUBLIC_PAGES = [
  { path: '/connect', name: 'Connect a client', about: 'set up Claude, Cursor, VS Code or your own agent, ready to paste' },
  { path: '/docs', name: 'MCP tools', about: 'what an AI client connected to this organization can do' },
];

export function registerHomePage(app: FastifyInstance, web: WebContext): void {
  const { ctx, csrfKey } = web;
  app.get('/', async (request, reply) => {
    const session = await currentSession(ctx, request);
    if (!session) {
      const available = PUBLIC_PAGES.filter((entry) => app.hasRoute({ method: 'GET', url: entry.path }));
      const body = (
        <>
          <h1>Atrium</h1>
          <p>This is the organization server where people and AI agents work together.</p>
          <p>
            <a href="/signin">Sign in</a> to see what waits for you and which applications you connected.
          </p>
          <PageList pages={available} />
        </>
      );
      return sendPage(reply, 200, 'Welcome', body);
    }
    const csrf = issueCsrfToken(ctx, csrfKey, request, reply, session);
    const viewer = { session, person: session.person, scope: await scopeOf(web, session.person), csrf };
    return sendPersonalPage(web, reply, session, csrf, 'Home', await consoleHome(web, viewer), '/');
  });
}

function PageList({ pages }: { pages: typeof PUBLIC_PAGES }) {
  return (
    <ul>
      {pages.map((entry) => (
        <li key={entry.path}>
          <a href={entry.path}>{entry.name}</a>: {entry.about}
        </li>
      ))}
    </ul>
  );
}
