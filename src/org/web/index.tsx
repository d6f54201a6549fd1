/**
 * The people's web pages (DESIGN 4.6): home, sign-in, joining by invitation, consent, the inbox, learned rules, connected apps, the account,
 * how to connect a client and the MCP tools reference. Server-rendered HTML (preact components, layout.tsx)
 * that works without JavaScript. Everything registered here shares one encapsulated scope carrying the cookie
 * and form parsers and the page security headers: framing is forbidden (`X-Frame-Options: DENY`, CSP
 * `frame-ancestors 'none'`), nothing but this origin's stylesheets and script may load (no inline script), and
 * no page is cached.
 */
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpServer } from '../../platform/http.js';
import { toAppError } from '../../platform/http.js';
import type { OrgContext } from '../context.js';
import { loadSharedSecret } from '../shared-secrets.js';
import { registerAccountPage } from './account.js';
import { registerActivityPage } from './activity.js';
import { registerConnectPage } from './connect.js';
import { registerConnectionsPage } from './connections.js';
import { registerConsentPage } from './consent.js';
import { registerInboxPage } from './inbox.js';
import { registerOutcomePage } from './outcome.js';
import { registerRulesPage } from './rules.js';
import { registerAssets } from './assets.js';
import { sendPage, type WebContext } from './respond.js';
import { registerSignInPages } from './signin.js';
import { registerHomePage } from './home.js';
import { registerOperationPages } from './operations.js';
import { registerAgentPages } from './agents.js';
import { registerAgentManagement } from './agents-manage.js';
import { registerCapabilityManagement } from './capabilities-manage.js';
import { registerCapabilityPages } from './capabilities.js';
import { registerToolsPage } from './tools-page.js';
import { registerMemoryPages } from './memory.js';
import { registerMemoryWriting } from './memory-write.js';
import { registerAskPages } from './ask.js';
import { registerTaskPages } from './tasks.js';
import { registerTaskForms } from './task-forms.js';
import { registerPeoplePage } from './people.js';
import { registerEventPages } from './events.js';
import { registerJoinPage } from './join.js';
import { registerSettingsPage } from './settings.js';
import type { OrgToolDefinition } from '../mcp/tools.js';

/** A refused page's heading, by its status: what a person reads before the reason. */
const ERROR_HEADINGS: Record<number, string> = {
  400: 'This request cannot be read',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Not possible now',
  429: 'Too many requests',
  503: 'Unavailable for a moment',
};

/**
 * What a person's browser gets for an address the service does not serve (a mistyped or stale link): a page that
 * says so and leads home. Anything else — an API client, a form post — keeps the catalogued JSON error.
 */
export function pageNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  const navigation = (request.method === 'GET' || request.method === 'HEAD') && (request.headers.accept ?? '').includes('text/html');
  if (!navigation) return undefined;
  // Outside the pages' scope, so helmet's headers are not added: the same rules, for a page without scripts or forms.
  reply.headers({
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none';style-src 'self';img-src 'self' data:;base-uri 'none';frame-ancestors 'none'",
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  return sendPage(
    reply,
    404,
    'Page not found',
    <>
      <h1>Page not found</h1>
      <p>There is no page at this address. It may have been mistyped, or the link that led here is out of date.</p>
      <p>
        <a href="/">Go to the home page</a>
      </p>
    </>,
  );
}

/** `tools`: the org MCP tools the service serves, listed on `/docs`. */
export async function registerWebPages(app: HttpServer, ctx: OrgContext, tools: readonly OrgToolDefinition[]): Promise<void> {
  const cookieKey = await loadSharedSecret(ctx.db, 'web-cookie-key');
  const csrfKey = await loadSharedSecret(ctx.db, 'web-csrf-key');
  const web: WebContext = { ctx, csrfKey };

  await registerAssets(app);
  await app.register(async (scope) => {
    await scope.register(cookie, { secret: cookieKey });
    if (!scope.hasContentTypeParser('application/x-www-form-urlencoded')) await scope.register(formbody);
    await scope.register(helmet, {
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'none'"],
          styleSrc: ["'self'"],
          scriptSrc: ["'self'"],
          connectSrc: ["'self'"],
          // Pico draws the checkbox tick and the details chevron as data: SVGs in its stylesheet.
          imgSrc: ["'self'", 'data:'],
          baseUri: ["'none'"],
          frameAncestors: ["'none'"],
          // No form-action: the consent form's answer is a redirect to the client, which form-action would block.
        },
      },
      frameguard: { action: 'deny' },
      referrerPolicy: { policy: 'no-referrer' },
      hsts: ctx.config.publicUrl.startsWith('https:') ? undefined : false,
    });
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });
    scope.setErrorHandler((error, request, reply) => {
      const appError = toAppError(error, request);
      const heading = ERROR_HEADINGS[appError.status] ?? 'Something went wrong';
      return sendPage(
        reply,
        appError.status,
        heading,
        <>
          <h1>{heading}</h1>
          <p>{appError.message}</p>
          <p>
            <a href="/">Go to the home page</a>
          </p>
        </>,
      );
    });

    registerSignInPages(scope, web);
    registerConsentPage(scope, web);
    registerConnectionsPage(scope, web);
    registerInboxPage(scope, web);
    registerOutcomePage(scope, web);
    registerRulesPage(scope, web);
    registerToolsPage(scope, web, tools);
    registerAccountPage(scope, web);
    registerConnectPage(scope, web);
    registerHomePage(scope, web);
    registerActivityPage(scope, web);
    registerOperationPages(scope, web);
    registerAgentPages(scope, web);
    registerAgentManagement(scope, web);
    registerCapabilityPages(scope, web);
    registerCapabilityManagement(scope, web);
    registerMemoryPages(scope, web);
    registerMemoryWriting(scope, web);
    registerAskPages(scope, web);
    registerTaskPages(scope, web);
    registerTaskForms(scope, web);
    registerPeoplePage(scope, web);
    registerEventPages(scope, web);
    registerJoinPage(scope, web);
    registerSettingsPage(scope, web);
  });
}
